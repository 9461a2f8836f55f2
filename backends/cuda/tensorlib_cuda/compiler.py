"""CUDA C to a cubin: NVRTC in-process where `libnvrtc` loads (the nvidia-cuda-nvrtc wheel or
the toolkit, through ctypes: no process start per kernel, so hundreds of kernels build in
seconds), else nvcc (/usr/local/cuda/bin, $CUDA_HOME/bin, PATH); a kernel NVRTC rejects is
retried with nvcc when there is one. TENSORLIB_CUDA_COMPILER=nvcc or =nvrtc forces one. Binaries
are cached on disk by content (`tensorlib.codegen.cache`: the key holds the source, options,
the GPU's compute capability, the compiler's and the driver's versions); a failure raises
CompileError with the compiler's log and the numbered source. Needs no GPU, so the tests
compile every generated kernel here."""
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tensorlib.codegen.cache import DiskCache, make_key

OPTIONS = ("-O3", "-std=c++17")


class CompileError(RuntimeError):
    """CUDA C failed to compile: the message has the compiler's log and the numbered source."""

    def __init__(self, where, log, source, options=()):
        numbered = "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), 1))
        super().__init__(f"CUDA compile failed for {where} (options: {' '.join(options)}).\n"
                         f"--- compiler log ---\n{log.strip()}\n--- source ---\n{numbered}")
        self.log, self.source = log, source


def find_nvcc():
    """The nvcc to use, or None: $TENSORLIB_NVCC, then /usr/local/cuda/bin (a PATH wrapper
    may not know the toolkit's include dir), $CUDA_HOME/bin, then PATH."""
    candidates = [os.environ.get("TENSORLIB_NVCC"), "/usr/local/cuda/bin/nvcc"]
    for env in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if os.environ.get(env):
            candidates.append(os.path.join(os.environ[env], "bin", "nvcc"))
    candidates.append(shutil.which("nvcc"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def nvcc_version(nvcc):
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1] if out.strip() else "unknown"


def nvcc_compile(nvcc, source, arch, target="cubin", options=OPTIONS, where="kernel"):
    """Bytes of `source` compiled by nvcc to `target` ('cubin' or 'ptx') for `arch` ('sm_90')."""
    with tempfile.TemporaryDirectory(prefix="tensorlib-nvcc-") as tmp:
        src, out = os.path.join(tmp, "k.cu"), os.path.join(tmp, "k." + target)
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, f"--{target}", f"-arch={arch}", *options, "-o", out, src]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise CompileError(f"{where} ({arch}, {nvcc})", done.stderr + done.stdout, source,
                               cmd[1:-3])
        with open(out, "rb") as f:
            return f.read()


# ---- NVRTC ---------------------------------------------------------------------------------

def _nvrtc_candidates():
    names = []
    for base in sys.path:
        names += glob.glob(os.path.join(base, "nvidia", "**", "libnvrtc.so*"), recursive=True)
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root:
            names += glob.glob(os.path.join(root, "lib64", "libnvrtc.so*"))
    names = [n for n in names if "builtins" not in os.path.basename(n)]
    return sorted(set(names), key=len) + ["libnvrtc.so"]


def _nvrtc_include_dirs(lib_path):
    """Where cuda_fp16.h lives for an NVRTC from a wheel (nvidia/*/include) or the toolkit."""
    dirs = []
    for base in sys.path:
        dirs += glob.glob(os.path.join(base, "nvidia", "*", "include"))
    dirs.append("/usr/local/cuda/include")
    return [d for d in dirs if os.path.exists(os.path.join(d, "cuda_fp16.h"))]


class NVRTC:
    """The few NVRTC calls that turn a source into a cubin."""

    def __init__(self):
        self.lib = self.path = None
        for name in _nvrtc_candidates():
            try:
                self.lib = ctypes.CDLL(name)
                self.path = name
                break
            except OSError:
                continue
        if self.lib is None:
            raise RuntimeError("neither nvcc nor libnvrtc was found: install the CUDA toolkit "
                               "or `pip install nvidia-cuda-nvrtc`")
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        self.version = f"nvrtc {major.value}.{minor.value}"
        self.includes = _nvrtc_include_dirs(self.path)

    def compile(self, source, arch, options=OPTIONS, where="kernel"):
        lib = self.lib
        prog = ctypes.c_void_p()
        lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None)
        opts = [f"--gpu-architecture={arch}", "-std=c++17", "--fmad=true"]
        opts += [f"--include-path={d}" for d in self.includes]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        try:
            status = lib.nvrtcCompileProgram(prog, len(opts), arr)
            if status != 0:
                size = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                lib.nvrtcGetProgramLog(prog, log)
                raise CompileError(f"{where} ({arch}, {self.version})",
                                   log.value.decode(errors="replace"), source, opts)
            size = ctypes.c_size_t()
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
            out = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetCUBIN(prog, out)
            return out.raw
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


# ---- per device ------------------------------------------------------------------------------

_ARGS = {"i64": "q", "long long": "q", "u64": "Q", "int": "i", "u32": "I", "unsigned int": "I",
         "short": "h", "unsigned char": "B", "signed char": "b", "float": "f", "double": "d"}
_SIGNATURE = re.compile(r'extern "C" __global__ void\s+(\w+)\s*\(([^)]*)\)')


def arg_formats(source):
    """{kernel name: pycuda prepare() format string} from the kernel signatures."""
    found = {}
    for name, params in _SIGNATURE.findall(source):
        fmt = ""
        for p in params.split(","):
            if "*" in p:
                fmt += "P"
                continue
            words = p.replace("const", " ").split()
            fmt += _ARGS[" ".join(words[:-1])]
        found[name] = fmt
    return found


class Compiler:
    """Per device: source -> {name: prepared pycuda Function}, in memory and on disk."""

    def __init__(self, dev, label):
        import pycuda.driver as drv
        self.drv, self.dev, self.label = drv, dev, label
        self.arch = f"sm_{dev.capability[0]}{dev.capability[1]}"
        self.nvcc, self.nvrtc = pick_compilers()
        self.tool = self._tool()
        self.memory = {}
        self.names = {}                 # id(Function) -> kernel name (the profiler's rows)
        self.disk = DiskCache()
        self.builds = 0
        self.memory_hits = 0

    def _tool(self):
        return self.nvrtc.version if self.nvrtc else f"nvcc {nvcc_version(self.nvcc)}"

    def cubin(self, source, where="kernel"):
        key = make_key("cuda", self.dev.identity, self.arch, self.tool, " ".join(OPTIONS), source)
        binary = self.disk.get(key)
        if binary is None:
            binary = self._compile(source, where)
            self.builds += 1
            self.disk.put(key, binary)
        return binary

    def _compile(self, source, where):
        if self.nvrtc is None:
            return nvcc_compile(self.nvcc, source, self.arch, where=where)
        try:
            return self.nvrtc.compile(source, self.arch, where=where)
        except CompileError:
            if self.nvcc is None:
                raise
            self.nvrtc = None                       # e.g. headers NVRTC can't find
            self.tool = self._tool()
            return nvcc_compile(self.nvcc, source, self.arch, where=where)

    def kernels(self, source, names):
        """{name: prepared Function} for the kernels `names` of `source`, built once."""
        entry = self.memory.get(source)
        if entry is not None:
            self.memory_hits += 1
            return entry[1]
        self.dev.activate()
        where = f"{self.label} ({self.dev.props.name})"
        module = self.drv.module_from_buffer(self.cubin(source, where))
        formats = arg_formats(source)
        found = {}
        for name in names:
            fn = module.get_function(name)
            fn.prepare(formats[name])
            found[name] = fn
            self.names[id(fn)] = name
        self.memory[source] = (module, found)     # the module stays loaded with its kernels
        return found


def pick_compilers():
    """(nvcc path or None, NVRTC or None): the one used first is NVRTC when it loads."""
    choice = os.environ.get("TENSORLIB_CUDA_COMPILER", "").strip().lower()
    nvcc = find_nvcc() if choice != "nvrtc" else None
    nvrtc = None
    if choice != "nvcc":
        try:
            nvrtc = NVRTC()
        except RuntimeError:
            if nvcc is None:
                raise
    return nvcc, nvrtc


