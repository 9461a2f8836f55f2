"""RemovableHandle: what register_*hook returns; `handle.remove()` takes the hook out."""


class RemovableHandle:
    """PyTorch's form is `RemovableHandle(hooks_dict, *, extra_dict=None)`: the handle takes
    a fresh `id`, the caller stores its hook under that key (PyG's MessagePassing hooks do),
    and remove() deletes the key from hooks_dict and from extra_dict (a dict or a list of
    them). tensorlib's own registrations also pass the hook (for a list of hooks) or the key
    they stored it under."""

    next_id = 0

    def __init__(self, hooks_dict, hook=None, key=None, *, extra_dict=None):
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self._container = hooks_dict
        self._hook = hook
        self._key = self.id if key is None else key
        self._extra = [] if extra_dict is None else \
            list(extra_dict) if isinstance(extra_dict, list) else [extra_dict]

    def remove(self):
        if isinstance(self._container, dict):
            self._container.pop(self._key, None)
        elif self._hook in self._container:
            self._container.remove(self._hook)
        for extra in self._extra:
            extra.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
