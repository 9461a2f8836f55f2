"""torch.export's graph signature: what each placeholder and output of an exported graph is
(a parameter, a buffer, a lifted constant or a user input; a user output), with torch's
class and field names so code reading `ep.graph_signature` ports."""
import dataclasses
import enum

__all__ = ["ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "TensorArgument"]


class InputKind(enum.Enum):
    USER_INPUT = 1
    PARAMETER = 2
    BUFFER = 3
    CONSTANT_TENSOR = 4


class OutputKind(enum.Enum):
    USER_OUTPUT = 1


@dataclasses.dataclass(frozen=True)
class TensorArgument:
    name: str


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument
    target: object = None        # the state_dict / constants key; None for user inputs
    persistent: object = None    # buffers only: whether it is in the state_dict


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument
    target: object = None


@dataclasses.dataclass
class ExportGraphSignature:
    input_specs: list
    output_specs: list

    def _targets(self, kind):
        return tuple(s.target for s in self.input_specs if s.kind is kind)

    @property
    def parameters(self):
        return self._targets(InputKind.PARAMETER)

    @property
    def buffers(self):
        return self._targets(InputKind.BUFFER)

    @property
    def lifted_tensor_constants(self):
        return self._targets(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self):
        return tuple(s.arg.name for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(s.arg.name for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.BUFFER}

    def __str__(self):
        lines = ["# inputs"]
        for s in self.input_specs:
            extra = "" if s.target is None else f" target={s.target!r}"
            if s.kind is InputKind.BUFFER:
                extra += f" persistent={s.persistent}"
            lines.append(f"{s.arg.name}: {s.kind.name}{extra}")
        lines += ["", "# outputs"] + [f"{s.arg.name}: {s.kind.name}" for s in self.output_specs]
        return "\n".join(lines)
