"""py_bridge.py: the Python half of the harness's bridge for Python
candidates (qNN.full.py / qNN.core.py; the ABI: include/dkb/candidate.py;
the design: docs/harness.md, "Python candidates").

This one file is embedded twice (as a C string, py_embed.cmake):
  - in dkb, for the build step: `python3 -I -S -B -c SOURCE check FILE MODE`
    in the sandbox parses the candidate (it is never run there), refuses what
    the allow-list forbids (exit 3, one line "line N: ..."), a syntax error
    (exit 4) or a missing entry function (exit 5), and prints the shared
    libpython and prefix of this interpreter (exit 0);
  - in the worker's shim (py_shim.c), which runs it as module `dkb_bridge`
    in the embedded interpreter: init() imports the allowed libraries, primes
    torch and installs the audit hook before any candidate code exists;
    call() makes one candidate call: the candidate module executed afresh,
    its arguments built as zero-copy tensors over the harness's buffers, the
    entry function called, its answer written into the harness's result or
    output buffers. Status codes (PY_RC below) and one line on stderr
    ("dkb-python: CLASS: message") tell the harness what happened.
Everything here is harness code; candidate code only ever sees the objects
call() hands it and its own restricted builtins."""

import sys
import types as _types

# ---- the allow-list (shared by the static check and the run-time guard) ----

ALLOWED_ROOTS = ("torch", "triton", "numpy", "math", "typing", "__future__")
DENIED_MODULES = (
    "torch.utils.cpp_extension", "torch.utils.data", "torch.utils.tensorboard", "torch.utils.benchmark",
    "torch.utils.model_zoo", "torch.utils.file_baton", "torch.hub", "torch.multiprocessing", "torch.distributed",
    "torch.package", "torch.testing", "torch.onnx", "torch._dynamo", "torch._inductor", "torch.serialization",
    "numpy.ctypeslib", "numpy.distutils", "numpy.f2py", "numpy.testing", "numpy.lib.format", "numpy.lib.npyio",
    "triton.runtime.build", "triton.testing",
)
# names (attributes or variables) that lead out of the allowed libraries: to
# the system, to files, to frames (and so to the harness's objects)
DENIED_NAMES = frozenset((
    "os", "sys", "subprocess", "ctypes", "socket", "builtins", "importlib", "io", "shutil", "pathlib",
    "multiprocessing", "threading", "signal", "mmap", "gc", "inspect", "pickle", "marshal", "tempfile",
    "from_file", "fromfile", "tofile", "loadtxt", "savetxt", "genfromtxt", "memmap",
    "load_library", "hub", "cpp_extension", "ctypeslib", "system", "popen", "_C", "_dl", "_utils_internal",
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame", "ag_frame",
    "tb_frame", "tb_next",
    # Triton's run-time configuration and caches: hooks and state there would
    # survive a call (its compiled kernels are kept across calls)
    "knobs", "device_caches", "kernel_cache", "set_active", "reset_active", "cache_hook", "launch_enter_hook",
    "launch_exit_hook", "jit_cache_hook", "jit_post_compile_hook",
    # the parts of a kept compiled kernel (a launch returns it) that hold
    # mutable objects shared by every call: its source (constants, the first
    # call's @jit object), its launcher, its binary and metadata
    "src", "run", "asm", "packed_metadata", "launch_metadata",
))
DENIED_BUILTINS = frozenset((
    "open", "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals", "locals",
    "vars", "input", "breakpoint", "help", "exit", "quit", "copyright", "credits", "license",
))
ALLOWED_DUNDER_NAMES = frozenset(("__name__", "__future__"))


def _module_allowed(name):
    """'' when module `name` may be imported, else why not."""
    root = name.split(".")[0]
    if root not in ALLOWED_ROOTS:
        return "import of '%s' (allowed: %s)" % (name, ", ".join(ALLOWED_ROOTS))
    for d in DENIED_MODULES:
        if name == d or name.startswith(d + "."):
            return "import of '%s' (a part of %s that reaches the system)" % (name, root)
    return ""


# ---- the static check (build step) ----

def check_source(text, mode):
    """(status, message): 0 ok, 3 forbidden, 4 syntax error, 5 no entry."""
    import ast
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return 4, "line %s: %s" % (e.lineno, e.msg)
    except (ValueError, RecursionError, MemoryError) as e:
        return 4, "cannot parse: %s" % e
    imported = set()
    # names the module binds itself (a local `input` is not the builtin)
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        bad = ""
        if isinstance(node, ast.Import):
            for a in node.names:
                bad = bad or _module_allowed(a.name)
                imported.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad = "relative import"
            else:
                bad = _module_allowed(node.module or "")
                for a in node.names:
                    bad = bad or (a.name == "*" and "import *") or _module_allowed(node.module + "." + a.name)
                    if not bad and a.name in DENIED_NAMES:
                        bad = "import of '%s' from %s" % (a.name, node.module)
                    imported.add(a.asname or a.name)
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                bad = "access to attribute '%s' (private and dunder attributes lead to the internals of " \
                      "the interpreter, the libraries and the harness)" % node.attr
            elif node.attr in DENIED_NAMES:
                bad = "access to '%s' (it leads to the system, files or frames)" % node.attr
        elif isinstance(node, ast.Name):
            if node.id in DENIED_BUILTINS and node.id not in bound:
                bad = "use of '%s' (not available to candidates)" % node.id
            elif node.id.startswith("__") and node.id not in ALLOWED_DUNDER_NAMES:
                bad = "use of '%s'" % node.id
        if bad:
            return 3, "line %d: %s" % (line, bad)
    # attribute stores into imported modules or names: state hung on a library
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                    base = sub.value
                    while isinstance(base, (ast.Attribute, ast.Subscript)):
                        base = base.value
                    if isinstance(base, ast.Name) and base.id in imported:
                        return 3, "line %d: assignment into '%s' (an imported library: state there would " \
                                  "survive between calls)" % (sub.lineno, base.id)
                    if isinstance(base, ast.Call):
                        return 3, "line %d: assignment into the result of a call" % sub.lineno
    entry = "core" if mode == "core" else "full"
    if not any(isinstance(n, ast.FunctionDef) and n.name == entry for n in tree.body):
        return 5, "does not define %s() at module level" % entry
    return 0, ""


def _check_main(argv):
    import sysconfig
    path, mode = argv[2], argv[3]
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print("not UTF-8 text: %s" % e)
        return 4
    st, msg = check_source(text, mode)
    if st:
        print(msg)
        return st
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    so = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or ""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    cand = [libdir + "/" + so, libdir + "/" + multiarch + "/" + so, "/usr/lib/" + multiarch + "/" + so]
    import os
    lib = next((c for c in cand if so and os.path.exists(c)), "")
    print("libpython %s" % lib)
    print("prefix %s" % sys.base_prefix)
    print("executable %s" % sys.executable)
    # a virtual environment (sys.prefix is its directory, pyvenv.cfg): the
    # embedded interpreter starts from the base prefix and adds its
    # site-packages (init())
    # (site.py sets sys.prefix to it, and -S skips site.py: pyvenv.cfg
    # beside the executable or one directory up says so)
    exe_dir = os.path.dirname(sys.executable)
    venv = next((d for d in (exe_dir, os.path.dirname(exe_dir)) if os.path.isfile(os.path.join(d, "pyvenv.cfg"))),
                sys.prefix if sys.prefix != sys.base_prefix else "")
    if venv:
        import site
        dirs = [d for d in site.getsitepackages([venv]) if os.path.isdir(d)]
        if dirs:
            print("site %s" % ":".join(dirs))
    return 0


# ---- the run-time half (worker) ----

PY_RC_EXCEPTION = 100   # the candidate raised (detail: the exception)
PY_RC_FORBIDDEN = 101   # it did something the allow-list forbids
PY_RC_RESULT = 102      # its answer is not what the ABI asks for
PY_RC_BRIDGE = 103      # the bridge itself failed (a harness error)

_state = None


class _Frozen(type):
    """A metaclass: the harness's classes cannot get attributes (state) from
    a candidate."""

    def __setattr__(cls, name, value):
        raise TypeError("dkb: %s is read-only" % cls.__name__)

    def __delattr__(cls, name):
        raise TypeError("dkb: %s is read-only" % cls.__name__)


init_error = ""   # why init() failed, in words (the shim repeats it on every call)


def _say(cls, msg):
    global init_error
    import os
    if cls == "bridge" and not init_error and _state is None:
        init_error = " ".join(str(msg).split())[:400]
    line = "dkb-python: %s: %s\n" % (cls, " ".join(str(msg).split())[:600])
    try:
        os.write(2, line.encode("utf-8", "replace"))
    except OSError:
        pass


class _State:
    pass


def init(path, mode, backend, threads, sites=""):
    """Before any candidate code: import the libraries, prime torch (its
    thread pool, its lazily loaded kernels; on CUDA its context, the device
    operations and Triton's compiler), install the audit hook, compile the
    candidate's source (not run). 0, or PY_RC_BRIDGE with a message."""
    global _state
    import os
    import ctypes
    import warnings
    warnings.simplefilter("ignore")
    sys.dont_write_bytecode = True
    if sites:   # a virtual environment's site-packages, ahead of the base's
        import site
        before = list(sys.path)
        for d in sites.split(":"):
            site.addsitedir(d)
        sys.path[:] = [d for d in sys.path if d not in before] + before
    s = _State()
    s.mode, s.backend, s.threads, s.path = mode, backend, threads, path
    s.cuda = backend == "cuda"
    s.active = False
    s.filling = False
    s.compiling = 0
    s.violation = None
    try:
        import math  # noqa: F401
        import numpy  # noqa: F401
        import torch
    except Exception as e:  # a missing torch is the harness's problem, not the candidate's
        _say("bridge", "cannot import torch/numpy: %s" % e)
        return PY_RC_BRIDGE
    s.torch = torch
    s.triton = None
    try:
        import triton  # noqa: F401  (the CUDA target's; absent on CPU machines)
        s.triton = triton
    except Exception:
        pass
    torch.set_num_threads(max(1, threads))
    s.ctypes = ctypes
    s.os = os
    s.normpath = os.path.abspath   # relative paths resolved against the working directory (Triton builds in a chdir'd temporary)
    # the row's cache directory (the shim points TRITON_CACHE_DIR at
    # cache/triton and TMPDIR at cache/tmp: Triton's compiler writes both)
    s.cache_dir = os.path.dirname(os.path.normpath(os.environ.get("TRITON_CACHE_DIR", "/nonexistent/triton"))) + "/"
    if s.cuda:
        try:
            if not torch.cuda.is_available():
                _say("bridge", "torch sees no GPU (torch %s, CUDA %s)" % (torch.__version__, torch.version.cuda))
                return PY_RC_BRIDGE
            s.device = torch.device("cuda", torch.cuda.current_device())
        except Exception as e:
            _say("bridge", "cannot start torch on the GPU: %s" % e)
            return PY_RC_BRIDGE
    # prime what a candidate's first call would otherwise load under the
    # system call filter (and count as threads left behind); on CUDA the
    # device's kernels too (lazy module loading)
    for dev in (("cpu", "cuda") if s.cuda else ("cpu",)):
        _prime(torch, numpy, dev)
    s.junk_fill = _torch_junk_fill(ctypes)
    with open(path, "rb") as f:
        src = f.read()
    fname = os.path.basename(path)
    try:
        s.code = compile(src, fname, "exec", dont_inherit=True)
    except SyntaxError as e:
        _say("exception", "SyntaxError: line %s: %s" % (e.lineno, e.msg))
        return PY_RC_EXCEPTION
    # the source's lines for inspect (Triton's @jit reads a kernel's source
    # through it), so nothing opens the file while the candidate runs
    import linecache
    text = src.decode("utf-8", "replace")
    linecache.cache[fname] = (len(text), None, text.splitlines(True), fname)
    s.builtins = _candidate_builtins(s)
    if s.cuda and s.triton is not None:
        rc = _triton_setup(s)
        if rc:
            return rc
    # the directories of the allowed libraries and of the standard library:
    # reading their files (a lazy import inside torch) is not a violation
    import sysconfig
    dirs = [sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", "")]
    for m in ("torch", "numpy", "triton"):
        mod = sys.modules.get(m)
        for d in getattr(mod, "__path__", []) if mod else []:
            dirs.append(d)
    s.lib_dirs = tuple(os.path.normpath(d) + "/" for d in dirs if d)
    s.views = {}
    s.parsed = {}
    s.guarded = 0
    _state = s
    _guard_libraries(s)
    sys.addaudithook(_audit)
    return 0


def _prime(torch, numpy, dev):
    """Run once the operations candidates use first, on device dev."""
    x = torch.arange(1 << 16, dtype=torch.int64, device=dev)
    (x * 3 + 1).sum().item()
    (x.to(torch.float64) * 0.5).cumsum(0)
    torch.sort(x.flip(0))
    torch.unique(x % 7, return_counts=True)
    torch.bincount((x % 5).to(torch.int64))
    x.new_zeros(8).index_add_(0, (x % 8)[:100], x[:100])
    torch.searchsorted(x, x[:10])
    torch.bucketize(x[:10], x)
    xf = x[:64].to(torch.float64).reshape(8, 8)
    (xf @ xf).sum()
    torch.topk(x[:100], 3)
    torch.argsort(x[:100])
    torch.where(x > 2, x, -x).clamp(0, 5)
    torch.repeat_interleave(x[:4], x[:4] % 3)
    torch.div(x, 3, rounding_mode="floor")
    x.gather(0, x[:5])
    str(x[:3])
    (x > 5).nonzero()
    x.masked_select(x > 3)
    torch.zeros(5, device=dev).scatter_add_(0, torch.tensor([0, 1], device=dev), torch.tensor([1.0, 2.0], device=dev))
    x.to(torch.int32).cpu()
    numpy.arange(10).sum()
    if dev == "cuda":
        torch.cuda.synchronize()


# ---- Triton (the CUDA target) ----

_TRITON_PRIME = """
import triton
import triton.language as tl


@triton.jit
def dkb_prime(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(y + i, tl.load(x + i, mask=m) + 1, mask=m)
"""


def _triton_setup(s):
    """Triton's compiler wrapped (compiled kernels kept across calls, its
    compilation let through the audit hook: _compile_allowed), its driver
    and a first kernel's launcher built now, outside any candidate code.
    0, or PY_RC_BRIDGE."""
    triton, torch = s.triton, s.torch
    try:
        import triton.compiler as tc
        real = tc.compile
        kept = {}

        def compile_kept(src, target=None, options=None, **kw):
            try:
                key = (src.hash(), repr(target), repr(sorted((options or {}).items())), repr(sorted(kw.items())))
            except Exception:
                key = None
            ck = kept.get(key) if key is not None else None
            if ck is not None:
                return ck
            s.compiling += 1
            try:
                ck = real(src, target=target, options=options, **kw)
                ck._init_handles()   # the launcher built and the module loaded now, under the same allowance
            finally:
                s.compiling -= 1
            _freeze_kernel(s, ck)
            if key is not None:
                kept[key] = ck
            return ck

        tc.compile = compile_kept
        if getattr(triton, "compile", None) is real:
            triton.compile = compile_kept
        s.triton_kept = kept
        try:
            _jit_warm(compile_kept)
        except Exception as e:   # Triton's own set-up every call: slower, not wrong
            _say("note", "no warm @triton.jit set-up: %s: %s" % (type(e).__name__, e))
        import linecache
        linecache.cache["dkb_prime.py"] = (len(_TRITON_PRIME), None, _TRITON_PRIME.splitlines(True), "dkb_prime.py")
        g = {"__name__": "dkb_prime"}
        exec(compile(_TRITON_PRIME, "dkb_prime.py", "exec"), g)
        x = torch.arange(1000, dtype=torch.int64, device="cuda")
        y = torch.empty_like(x)
        g["dkb_prime"][(4,)](x, y, 1000, BLOCK=256)
        torch.cuda.synchronize()
        if not bool((y == x + 1).all()):
            _say("bridge", "Triton's first kernel computed a wrong answer")
            return PY_RC_BRIDGE
    except Exception as e:
        _say("bridge", "cannot start Triton: %s: %s" % (type(e).__name__, e))
        return PY_RC_BRIDGE
    return 0


def _jit_simple(v):
    """A @triton.jit keyword argument that carries no object of the
    candidate's (None, a bool, int or str, or a list/tuple of them)."""
    if v is None or isinstance(v, (bool, int, str)):
        return True
    return isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, str)) for x in v)


# attributes a warm JITFunction gets anew from its own function (the rest
# comes from the first object's state as it was when Triton made it)
_JIT_FRESH = ("fn", "module", "signature", "params", "do_not_specialize", "do_not_specialize_on_alignment",
              "kernel", "pre_run_hooks", "arg_names", "constexprs", "used_global_vals", "hash", "device_caches",
              "__doc__", "__name__", "__qualname__", "__globals__", "__module__")


def _jit_carried(v):
    """Can a value of a new JITFunction's state be carried to a later
    call's object as it is? Only what no candidate can have changed or
    filled: immutable scalars and tuples of them, and Triton's own objects
    (its classes and functions, locks)."""
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return True
    if isinstance(v, tuple):
        return all(_jit_carried(x) for x in v)
    mod = getattr(v, "__module__", None) if isinstance(v, type) or callable(v) else type(v).__module__
    return isinstance(mod, str) and mod.split(".")[0] in ("triton", "_thread", "threading")


def _jit_warm(compile_kept):
    """The module is executed afresh before every call, so every call
    makes new @triton.jit objects, and each would redo what Triton does once
    per kernel (the source read, the AST walk that hashes its dependencies,
    the argument binder) before finding its compiled kernel: milliseconds
    per call. A JITFunction made for the same code as one made in an
    earlier call (the same code object, module-level: no closure, no
    default arguments, only plain keyword arguments) takes over what
    Triton derived for the first one, taken at moments no candidate code
    runs: its state as Triton's __init__ left it (immutable values only),
    the hash and the globals it read as Triton's cache_key computed them
    (globals of the candidate's module or of loaded modules only; Triton
    itself checks them against the new module's before every launch), and
    the binder and compiled kernels (the shared device_caches, reachable
    only through refused names; the kernels frozen: _freeze_kernel), and
    what Triton's create_binder set on the first object at its first
    launch (the compiler's entry points, which a later call needs when it
    compiles a new specialization: without them it fails).
    Nothing is read from the earlier call's objects, which the candidate
    could have changed; the function, its globals, signature, parameters
    and every list are made anew from the new function. Any surprise falls
    back to Triton's own set-up. compile_kept is the bridge's wrapper of
    Triton's compile, which create_binder picks up as the compiler."""
    import importlib
    tj = importlib.import_module("triton.runtime.jit")
    cls = tj.JITFunction
    init = cls.__init__
    key_prop = next((k.__dict__["cache_key"] for k in cls.__mro__ if "cache_key" in k.__dict__), None)
    binder = getattr(cls, "create_binder", None)
    if not isinstance(key_prop, property) or not callable(binder):
        return   # a Triton this was not written for: its own set-up every call
    warm = {}

    def warm_key(fn, args, kwargs):
        code = getattr(fn, "__code__", None)
        if code is None or args or getattr(fn, "__closure__", 1) is not None or \
                getattr(fn, "__defaults__", 1) is not None or getattr(fn, "__kwdefaults__", 1) is not None or \
                not all(_jit_simple(v) for v in kwargs.values()):
            return None
        return (code, fn.__module__, fn.__qualname__, code.co_filename, code.co_firstlineno,
                repr(sorted(kwargs.items())))

    def init_warm(self, fn, *args, **kwargs):
        key = warm_key(fn, args, kwargs)
        rec = warm.get(key) if key is not None else None
        if rec is not None and rec["hash"] is not None and rec["binder_set"] is not None:
            try:
                d = _jit_warm_state(tj, rec, fn, kwargs)
            except Exception:
                d = None
            if d is not None:
                self.__dict__.update(d)
                return
        init(self, fn, *args, **kwargs)
        if key is None or rec is not None:
            return
        try:
            _jit_remember(warm, key, self)
        except Exception:
            pass   # nothing remembered: Triton's own set-up in every call

    def cache_key(self):
        fresh = getattr(self, "hash", 0) is None
        h = key_prop.fget(self)
        rec = warm.get(self.__dict__.get("_dkb_warm_key")) if fresh else None
        if rec is not None and rec["hash"] is None and isinstance(h, str):
            try:
                rec["ugv"] = _jit_globals_read(self)
            except Exception:
                rec["ugv"] = None
            rec["hash"] = h if rec["ugv"] is not None else None
        return h

    def create_binder(self, *args, **kwargs):
        # Triton calls this once per device, through the first object's
        # device_caches; what it sets on the object (the compiler's entry
        # points, taken from Triton's modules) a warm object needs too
        before = dict(self.__dict__)
        out = binder(self, *args, **kwargs)
        rec = warm.get(self.__dict__.get("_dkb_warm_key"))
        if rec is not None and rec["binder_set"] is None:
            added = {k: v for k, v in self.__dict__.items()
                     if k not in _JIT_FRESH and (k not in before or before[k] is not v)}
            if all(_jit_carried(v) or v is compile_kept for v in added.values()):
                rec["binder_set"] = added
        return out

    cls.__init__ = init_warm
    cls.cache_key = property(cache_key)
    cls.create_binder = create_binder


def _jit_remember(warm, key, jf):
    """After Triton's own __init__ of jf (no candidate code has seen it
    yet): its state, if every part of it can be vouched for (_jit_carried),
    as warm[key] for later calls' objects; the hash and the globals come
    when Triton's cache_key computes them."""
    state = {}
    for k, v in jf.__dict__.items():
        if k in _JIT_FRESH:
            continue
        if isinstance(v, list) and all(_jit_carried(x) for x in v):
            v = tuple(v)   # raw_src: a list again in each object, never this one
        if not _jit_carried(v):
            return   # something Triton keeps that cannot be vouched for: no warm set-up
        state[k] = v
    warm[key] = {"state": state, "device_caches": jf.device_caches, "hash": None, "ugv": None, "binder_set": None,
                 "params": [(p.name, p.annotation, p.do_not_specialize, p.do_not_specialize_on_alignment)
                            for p in jf.params]}
    jf.__dict__["_dkb_warm_key"] = key


def _jit_globals_read(jf):
    """The globals Triton's cache_key found jf to read, as (name, own, value,
    dict) with own true for its module's globals; None when one is in a
    dict that is neither those nor a loaded module's (put there by other
    code than Triton's walk)."""
    own = jf.__globals__
    modules = {id(m.__dict__) for m in list(sys.modules.values()) if getattr(m, "__dict__", None) is not None}
    out = []
    missing = object()
    for (name, _), (val, g) in jf.used_global_vals.items():
        if g is not own and id(g) not in modules:
            return None
        if g.get(name, missing) is missing:
            return None
        out.append((name, g is own, val, None if g is own else g))
    return out


def _jit_warm_state(tj, rec, fn, kwargs):
    """The attributes of a JITFunction for fn that takes over rec's state
    (_jit_warm), or None when its parameters or the globals it reads
    differ."""
    dns = list(kwargs.get("do_not_specialize") or [])
    dnsa = list(kwargs.get("do_not_specialize_on_alignment") or [])
    sig = tj.inspect.signature(fn)
    params = [tj.KernelParam(i, p, i in dns or p.name in dns, i in dnsa or p.name in dnsa)
              for i, p in enumerate(sig.parameters.values())]
    if [(p.name, p.annotation, p.do_not_specialize, p.do_not_specialize_on_alignment) for p in params] != rec["params"]:
        return None
    ng = fn.__globals__
    missing = object()
    ugv = {}
    for name, own, val, g in rec["ugv"]:
        g = ng if own else g
        now = g.get(name, missing)
        if own and now is not missing and now != val:
            return None   # a global it read differs already: Triton's own set-up (a new hash)
        ugv[(name, id(g))] = (val, g)
    d = {k: (list(v) if k == "raw_src" and isinstance(v, tuple) else v) for k, v in rec["state"].items()}
    d.update(rec["binder_set"])
    d.update(fn=fn, module=fn.__module__, signature=sig, params=params, do_not_specialize=dns,
             do_not_specialize_on_alignment=dnsa, kernel=None, pre_run_hooks=[],
             arg_names=[p.name for p in params], constexprs=[p.num for p in params if p.is_constexpr],
             used_global_vals=ugv, hash=rec["hash"], device_caches=rec["device_caches"],
             __doc__=fn.__doc__, __name__=fn.__name__, __qualname__=fn.__qualname__, __globals__=ng,
             __module__=fn.__module__)
    return d


def _freeze_kernel(s, ck):
    """A compiled kernel is kept across calls (it carries no answer): its
    mutable parts are made read-only and attribute stores on it, while a
    candidate runs, are violations (state there would survive a call)."""
    asm = getattr(ck, "asm", None)
    if isinstance(asm, dict):
        try:
            ck.asm = _types.MappingProxyType(dict(asm))
        except Exception:
            pass
    try:
        ck.__class__ = _guarded_object_class(type(ck))
    except TypeError:
        pass


def _guarded_object_class(cls, cache={}):  # noqa: B006 (one guarded subclass per class)
    g = cache.get(cls)
    if g is None:
        def setattr_(self, name, value):
            st = _state
            if st is not None and st.active and not st.compiling:
                if st.violation is None:
                    st.violation = "store into a compiled Triton kernel's %s (state kept there survives between " \
                                   "calls)" % name
                raise AttributeError("candidates may not change a compiled kernel")
            cls.__setattr__(self, name, value)

        g = cache[cls] = type(cls.__name__, (cls,), {"__setattr__": setattr_, "__module__": cls.__module__})
    return g


# where an os event's dir_fd arguments sit, for its first and second path
# (shutil.rmtree removes a temporary directory's files by name relative to
# the directory's descriptor)
_DIR_FD_ARGS = {"os.remove": (1,), "os.rmdir": (1,), "os.mkdir": (2,), "os.rename": (2, 3), "os.chmod": (2,),
                "os.utime": (3,), "os.link": (2, 3), "os.symlink": (2, 2), "shutil.rmtree": (1,)}


def _resolve(s, path, dir_fd):
    """path made absolute: against the directory open as dir_fd (an int),
    else the working directory; '..' resolved."""
    os = s.os
    if not os.path.isabs(path) and isinstance(dir_fd, int) and dir_fd >= 0:
        try:
            path = os.path.join(os.readlink("/proc/self/fd/%d" % dir_fd), path)
        except OSError:
            return "/nonexistent/" + path
    return s.normpath(path)


def _compile_allowed(s, event, args):
    """While Triton compiles a kernel (the bridge's wrapper is on the
    stack): what its compiler does is let through, and nothing else: ptxas
    and the C compiler run as processes (subprocess.Popen of those
    programs), files read anywhere read-only, written, renamed and removed
    only under the row's cache directory (TRITON_CACHE_DIR, TMPDIR)."""
    os = s.os
    if event == "subprocess.Popen":
        exe = args[0] if args else ""
        argv = args[1] if len(args) > 1 else None
        if not exe and argv:
            exe = argv[0] if isinstance(argv, (list, tuple)) else argv
        if isinstance(exe, bytes):
            exe = exe.decode("utf-8", "replace")
        base = os.path.basename(str(exe))
        return base.startswith(("ptxas", "gcc", "cc", "clang", "x86_64-linux-gnu-gcc"))
    if event in ("os.posix_spawn", "os.fork", "os.exec", "os.spawn", "os.system", "os.kill"):
        return event == "os.posix_spawn" or event == "os.exec"   # subprocess's own, after its Popen event
    if event == "open":
        path = args[0] if args else ""
        if isinstance(path, int):
            return True
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        p = s.normpath(str(path))
        mode = args[1] if len(args) > 1 else "r"
        flags = args[2] if len(args) > 2 else 0
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & 0o3)
        return not writing or p == "/dev/null" or (p + "/").startswith(s.cache_dir)   # subprocess's DEVNULL
    if event.startswith("os.") or event.startswith("shutil.") or event.startswith("tempfile."):
        if event in ("os.listdir", "os.scandir"):
            return True
        fds = _DIR_FD_ARGS.get(event, ())
        for i, a in enumerate(args[:2]):
            if isinstance(a, bytes):
                a = a.decode("utf-8", "replace")
            if not isinstance(a, str) or not a:
                continue
            fd = args[fds[i]] if i < len(fds) and fds[i] < len(args) else None
            if not (_resolve(s, a, fd) + "/").startswith(s.cache_dir):
                return False
        return True
    if event.startswith("ctypes."):
        return True
    return False


# triton's modules keep their class: Triton's code generator takes a global
# that is a module only when its type is exactly ModuleType (`tl` in a
# kernel); stores into them are refused by the static check alone
_LIBRARY_ROOTS = ("torch", "numpy", "math")


def _library_store(module, name, value):
    """Called before every attribute store or delete on an allowed
    library's module: while the candidate runs, a store is state that
    would survive the call (however the module was reached: an alias, an
    argument, a container), so it is a violation and fails. The import
    system binding a submodule to its parent is not a store of the
    candidate's."""
    s = _state
    if s is None or not s.active:
        return
    if value is not None and sys.modules.get("%s.%s" % (module.__name__, name)) is value:
        return
    if s.violation is None:
        s.violation = "store into %s.%s (state kept on a library survives between calls)" % (module.__name__, name)
    raise AttributeError("candidates may not change the library module %s" % module.__name__)


def _guarded_class(cls, cache={}):  # noqa: B006 (one guarded subclass per module class)
    g = cache.get(cls)
    if g is None:
        def setattr_(self, name, value):
            _library_store(self, name, value)
            cls.__setattr__(self, name, value)

        def delattr_(self, name):
            _library_store(self, name, None)
            cls.__delattr__(self, name)

        g = cache[cls] = type("Guarded" + cls.__name__, (cls,), {"__setattr__": setattr_, "__delattr__": delattr_})
    return g


def _guard_libraries(s):
    """Every loaded module of the allowed libraries gets a guarded class
    (its attribute stores go through _library_store); run at init and
    after each call, for modules a call imported."""
    if len(sys.modules) == s.guarded:
        return
    for name, mod in list(sys.modules.items()):
        if mod is None or name.split(".")[0] not in _LIBRARY_ROOTS or type(mod).__name__.startswith("Guarded"):
            continue
        try:
            mod.__class__ = _guarded_class(type(mod))
        except (TypeError, AttributeError):
            pass  # a module object whose class cannot be swapped (torch's config modules refuse it)
    s.guarded = len(sys.modules)


def _torch_junk_fill(ctypes):
    """Make torch's CPU allocator fill every new tensor with a junk pattern
    (c10's caffe2_cpu_allocator_do_junk_fill), so a tensor a call leaves
    uninitialised (torch.empty) never shows what an earlier call left in
    the same memory. True when set."""
    path = ""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if "/libc10.so" in line:
                    path = line.split()[-1]
                    break
        if not path:
            return False
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        ctypes.c_bool.in_dll(lib, "_ZN3fLB39FLAGS_caffe2_cpu_allocator_do_junk_fill").value = True
        return True
    except (OSError, ValueError):
        return False


_AUDITED = ("open", "os.", "subprocess.", "socket.", "ctypes.", "sys._getframe", "sys._current_frames",
            "sys.settrace", "sys.setprofile", "sys.addaudithook", "shutil.", "tempfile.", "glob.", "pty.",
            "urllib.", "http.", "ftplib.", "smtplib.", "mmap.", "signal.", "sqlite3.", "webbrowser.")


def _audit(event, args):
    s = _state
    if s is None or not s.active:
        return
    if not event.startswith(_AUDITED) or event == "sys._getframemodulename":   # a module's name, not a frame
        return
    if s.compiling and _compile_allowed(s, event, args):
        return
    if event in ("open", "os.listdir", "os.scandir") and args and _library_read(s, event, args):
        return
    if s.filling and event.startswith("ctypes."):
        return   # the bridge writing the answer into the harness's buffers
    what = "%s%s%s" % (event, (" " + repr(args[0])[:200]) if args else "", " (while Triton compiled)" if s.compiling else "")
    if s.violation is None:
        s.violation = what
    raise PermissionError("dkb: not allowed in a candidate: %s" % what)


def _library_read(s, event, args):
    """True for a read of the allowed libraries' own files (what a lazy
    import inside them does): a .py/.pyc/.so file opened read-only, or a
    listing of a directory, under their directories or the standard
    library's ('..' resolved first)."""
    path = args[0]
    if isinstance(path, bytes):
        path = path.decode("utf-8", "replace")
    if not isinstance(path, str):
        return False
    p = s.normpath(path)
    if not any((p + "/").startswith(d) for d in s.lib_dirs):
        return False
    if event != "open":
        return True
    mode = args[1] if len(args) > 1 else "r"
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return False
    if isinstance(flags, int) and flags & 0o3:   # O_WRONLY | O_RDWR
        return False
    return p.endswith((".py", ".pyc", ".so"))


def _candidate_builtins(s):
    import builtins
    b = {k: v for k, v in vars(builtins).items() if k not in DENIED_BUILTINS}

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        why = "relative import" if level else _module_allowed(name)
        if not why and fromlist:
            for item in fromlist:
                if item in DENIED_NAMES:
                    why = "import of '%s' from %s" % (item, name)
                elif item != "*":
                    why = _module_allowed(name + "." + item) if "." not in item else why
                if why:
                    break
        if why:
            if s.violation is None:
                s.violation = why
            raise ImportError("dkb: " + why)
        return __import__(name, globals, locals, fromlist, 0)

    def denied(name):
        def f(*a, **k):
            if s.violation is None:
                s.violation = "call of %s()" % name
            raise PermissionError("dkb: %s() is not available to candidates" % name)
        return f

    b["__import__"] = guarded_import
    for name in ("open", "exec", "eval", "compile", "getattr", "setattr", "delattr", "globals", "locals", "vars",
                 "input", "breakpoint"):
        b[name] = denied(name)
    return b


# ---- typed views over the harness's memory ----

# dkb_cand_type -> (torch dtype name, element bytes)
_TYPES = {0: ("bool", 1), 1: ("uint8", 1), 2: ("int8", 1), 3: ("int16", 2), 4: ("int32", 4), 5: ("int64", 8),
          6: ("int64", 16), 7: ("float64", 8), 8: ("int64", 8)}
_TYPE_NAMES = {0: "BOOL", 1: "U8", 2: "I8", 3: "I16", 4: "I32", 5: "I64", 6: "I128", 7: "F64", 8: "STR"}


def _structs(ctypes):
    c = ctypes

    class Dict(c.Structure):
        _fields_ = [("size", c.c_int), ("str", c.POINTER(c.c_void_p)), ("len", c.POINTER(c.c_size_t))]

    class Vec(c.Structure):
        _fields_ = [("name", c.c_char_p), ("type", c.c_int), ("scale", c.c_int), ("n", c.c_int64),
                    ("data", c.c_void_p), ("bytes", c.c_void_p), ("nbytes", c.c_int64),
                    ("dict", c.POINTER(Dict)), ("cap", c.c_int64), ("bytes_cap", c.c_int64)]

    class Scalar(c.Structure):
        _fields_ = [("name", c.c_char_p), ("i", c.c_int64), ("f", c.c_double), ("s", c.c_char_p)]

    class Set(c.Structure):
        _fields_ = [("nvec", c.c_int), ("vec", c.POINTER(Vec)), ("nscalar", c.c_int), ("scalar", c.POINTER(Scalar))]

    class Table(c.Structure):
        _fields_ = [("name", c.c_char_p), ("rows", c.c_int64), ("ncols", c.c_int), ("cols", c.POINTER(Vec))]

    class Db(c.Structure):
        _fields_ = [("scale_factor", c.c_double), ("ntables", c.c_int), ("tables", c.POINTER(Table))]

    class Param(c.Structure):
        _fields_ = [("name", c.c_char_p), ("kind", c.c_int), ("scale", c.c_int), ("i", c.c_int64), ("s", c.c_char_p)]

    class Params(c.Structure):
        _fields_ = [("n", c.c_int), ("p", c.POINTER(Param))]

    class ResCol(c.Structure):
        _fields_ = [("name", c.c_char_p), ("type", c.c_int), ("scale", c.c_int), ("i64", c.c_void_p),
                    ("dec", c.c_void_p), ("f64", c.c_void_p), ("date", c.c_void_p), ("str_off", c.c_void_p),
                    ("str_bytes", c.c_void_p), ("bytes_cap", c.c_int64), ("is_null", c.c_void_p)]

    class Result(c.Structure):
        _fields_ = [("ncols", c.c_int), ("cols", c.POINTER(ResCol)), ("cap", c.c_int64), ("nrows", c.c_int64)]

    class Env(c.Structure):
        _fields_ = [("abi_version", c.c_int), ("threads", c.c_int), ("stream", c.c_void_p)]

    return dict(Dict=Dict, Vec=Vec, Scalar=Scalar, Set=Set, Table=Table, Db=Db, Param=Param, Params=Params,
                ResCol=ResCol, Result=Result, Env=Env)


# torch dtype name -> __cuda_array_interface__ typestr
_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
            "float64": "<f8"}


class _DeviceBuffer:
    """Device memory described by __cuda_array_interface__ (version 2: no
    stream to synchronise with; the harness's buffers are ready)."""
    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, ptr, nbytes, typestr):
        self.__cuda_array_interface__ = {"shape": (nbytes // int(typestr[2:]),), "typestr": typestr,
                                         "data": (ptr, False), "strides": None, "version": 2}


def _view(s, ptr, nbytes, dtype, writable, dev=False):
    """A tensor over [ptr, ptr + nbytes): host memory (the CPU backend, and
    the result table and descriptors on CUDA) through a memoryview, cached
    (harness state, never handed out); device memory (dev: the resident
    columns, prepared inputs and core outputs on CUDA) through
    __cuda_array_interface__, zero-copy. The tensor is new every time."""
    torch = s.torch
    dt = getattr(torch, dtype)
    if not ptr or nbytes <= 0:
        return torch.empty(0, dtype=dt, device="cuda" if dev else "cpu")
    if dev:
        return torch.as_tensor(_DeviceBuffer(ptr, nbytes, _TYPESTR[dtype]), device=s.device)
    key = (ptr, nbytes, writable)
    mv = s.views.get(key)
    if mv is None:
        arr = (s.ctypes.c_char * nbytes).from_address(ptr)
        mv = memoryview(arr).cast("B")
        if not writable:
            mv = mv.toreadonly()
        s.views[key] = mv
    return torch.frombuffer(mv, dtype=dt)


def _dict_tuple(s, d):
    if not d:
        return None
    d = d.contents
    return tuple(s.ctypes.string_at(d.str[i], d.len[i]).decode("utf-8", "replace") for i in range(d.size))


class Text(metaclass=_Frozen):
    """A string vector: `offsets` (n + 1 int64) into `data` (uint8 bytes);
    row r is data[offsets[r]:offsets[r+1]]."""
    __slots__ = ("offsets", "data")

    def __init__(self, offsets, data):
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "data", data)

    def __setattr__(self, k, v):
        raise TypeError("dkb: Text is read-only")

    def __len__(self):
        return max(0, self.offsets.numel() - 1)


def _vec_tensor(s, v, writable):
    """An input vector or column: on CUDA its data and bytes are device
    memory (candidate.h)."""
    dtype, es = _TYPES[v.type]
    dev = s.cuda
    if v.type == 8:
        return Text(_view(s, v.data, (v.n + 1) * 8, "int64", writable, dev),
                    _view(s, v.bytes, v.nbytes, "uint8", writable, dev))
    t = _view(s, v.data, v.n * es, dtype, writable, dev)
    return t.view(-1, 2) if v.type == 6 else t


class Table(metaclass=_Frozen):
    """One table of the database: `table["l_shipdate"]` is its column as a
    read-only tensor (zero-copy; TEXT columns: a Text), `rows`, `columns`
    (names), `dict("l_returnflag")` a U8 column's dictionary."""
    __slots__ = ("_c", "_cols", "name", "rows")

    def __init__(self, c, cols, name, rows):
        for k, v in (("_c", c), ("_cols", cols), ("name", name), ("rows", rows)):
            object.__setattr__(self, k, v)

    def __setattr__(self, k, v):
        raise TypeError("dkb: the database is read-only")

    def __getitem__(self, col):
        e = self._cols.get(col)
        if e is None:
            raise KeyError("dkb: table %s has no column %r" % (self.name, col))
        return _vec_tensor(_state, e[0], False)

    def __contains__(self, col):
        return col in self._cols

    @property
    def columns(self):
        return tuple(self._cols)

    def dict(self, col):
        e = self._cols.get(col)
        if e is None:
            raise KeyError("dkb: table %s has no column %r" % (self.name, col))
        return e[1]


class Database(metaclass=_Frozen):
    """The database: `db["lineitem"]` is a Table; `scale_factor`; `tables`."""
    __slots__ = ("_t", "scale_factor")

    def __init__(self, t, sf):
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "scale_factor", sf)

    def __setattr__(self, k, v):
        raise TypeError("dkb: the database is read-only")

    def __getitem__(self, name):
        e = self._t.get(name)
        if e is None:
            raise KeyError("dkb: no table %r" % (name,))
        return Table(*e)

    def __contains__(self, name):
        return name in self._t

    @property
    def tables(self):
        return tuple(self._t)


class Env(metaclass=_Frozen):
    """What the candidate may use: threads, device ("cpu" / "cuda"), stream
    (None on CPU), and per mode: result (full: the declared result columns,
    (name, kind, scale)), outputs (core: name -> (type, scale, cap)), dicts
    (core: U8 input name -> its dictionary), params (full: name -> (kind, i,
    scale), the exact parameters: a decimal 0.06 is ("decimal", 6, 2))."""
    __slots__ = ("threads", "device", "stream", "result", "outputs", "dicts", "params")

    def __init__(self, **kw):
        for k in self.__slots__:
            object.__setattr__(self, k, kw.get(k))

    def __setattr__(self, k, v):
        raise TypeError("dkb: env is read-only")


_RES_KINDS = {0: "int", 1: "decimal", 2: "float", 3: "date", 4: "string"}
_PARAM_KINDS = {0: "int", 1: "date", 2: "decimal", 3: "string"}


def _db(s, ptr):
    e = s.parsed.get(("db", ptr))
    if e is None:
        S = s.structs
        db = S["Db"].from_address(ptr)
        tables = {}
        for i in range(db.ntables):
            t = db.tables[i]
            name = t.name.decode()
            cols = {}
            for j in range(t.ncols):
                v = t.cols[j]
                cols[v.name.decode()] = (v, _dict_tuple(s, v.dict))
                _vec_tensor(s, v, False)   # its memory views made now, outside the candidate's window
            tables[name] = (None, _types.MappingProxyType(cols), name, int(t.rows))
        e = (tables, float(db.scale_factor))
        s.parsed[("db", ptr)] = e
    return Database(e[0], e[1])


def _params(s, ptr):
    e = s.parsed.get(("params", ptr))
    if e is None:
        S = s.structs
        p = S["Params"].from_address(ptr)
        e = []
        for i in range(p.n):
            q = p.p[i]
            if q.kind == 3:
                v = q.s.decode("utf-8", "replace") if q.s is not None else ""
            elif q.kind == 2:
                v = q.i / 10 ** q.scale
            else:
                v = int(q.i)
            exact = (_PARAM_KINDS.get(q.kind, "?"), v if q.kind == 3 else int(q.i), int(q.scale))
            e.append((q.name.decode(), v, exact))
        e = tuple(e)
        s.parsed[("params", ptr)] = e
    return {n: v for n, v, _ in e}, {n: x for n, _, x in e}


def _scalar_value(sc):
    if sc.s is not None:
        return sc.s.decode("utf-8", "replace")
    if sc.i == 0 and sc.f != 0.0:
        return float(sc.f)
    return int(sc.i)


def _inputs(s, ptr):
    e = s.parsed.get(("in", ptr))
    if e is None:
        S = s.structs
        st = S["Set"].from_address(ptr)
        vecs = tuple((st.vec[i].name.decode(), st.vec[i]) for i in range(st.nvec))
        dicts = {n: _dict_tuple(s, v.dict) for n, v in vecs if v.dict}
        scal = tuple((st.scalar[i].name.decode(), _scalar_value(st.scalar[i])) for i in range(st.nscalar))
        e = (vecs, scal, dicts)
        s.parsed[("in", ptr)] = e
    d = {n: _vec_tensor(s, v, False) for n, v in e[0]}
    d.update(e[1])
    return d, dict(e[2])


def _outset(s, ptr):
    e = s.parsed.get(("out", ptr))
    if e is None:
        S = s.structs
        st = S["Set"].from_address(ptr)
        e = tuple((st.vec[i].name.decode(), st.vec[i]) for i in range(st.nvec))
        s.parsed[("out", ptr)] = e
    return e


def _outputs(s, outs):
    d = {}
    for name, v in outs:
        dtype, es = _TYPES[v.type]
        if v.type == 8:
            d[name] = Text(_view(s, v.data, (v.cap + 1) * 8, "int64", True, s.cuda),
                           _view(s, v.bytes, v.bytes_cap, "uint8", True, s.cuda))
        else:
            t = _view(s, v.data, v.cap * es, dtype, True, s.cuda)
            d[name] = t.view(-1, 2) if v.type == 6 else t
    return d


class _ResultError(Exception):
    pass


def _as_tensor(s, x, what, keep_device=False):
    torch = s.torch
    if isinstance(x, torch.Tensor):
        t = x.detach().reshape(-1)
        return t if keep_device else t.cpu()
    try:
        import numpy
        if isinstance(x, numpy.ndarray):
            return torch.from_numpy(numpy.ascontiguousarray(x).reshape(-1))
    except Exception:
        pass
    if isinstance(x, (int, float, bool)):
        return torch.tensor([x])
    if isinstance(x, (list, tuple)):
        return None  # a Python sequence: handled by the caller
    raise _ResultError("%s: expected a tensor, an array or a list, got %s" % (what, type(x).__name__))


def _write_ints128(s, dst_ptr, values, n, what, dev=False):
    """values (tensor of integers, or Python ints) -> __int128[n] at dst
    (device memory when dev)."""
    torch = s.torch
    if n == 0:
        return
    d = _view(s, dst_ptr, n * 16, "int64", True, dev).view(-1, 2)
    if isinstance(values, torch.Tensor):
        if values.is_floating_point() or values.dtype == torch.bool:
            raise _ResultError("%s: exact integers are required (got %s)" % (what, values.dtype))
        if values.dim() == 2 and values.shape[1] == 2:
            d.copy_(values[:n].to(torch.int64))
            return
        v = values.to(torch.int64).to(d.device)
        d[:, 0].copy_(v)
        d[:, 1].copy_(torch.where(v < 0, -1, 0))
        return
    lo, hi = [], []
    for x in values:
        if isinstance(x, bool) or not isinstance(x, int):
            raise _ResultError("%s: exact integers are required (got %r)" % (what, x))
        if not -(1 << 127) <= x < (1 << 127):
            raise _ResultError("%s: %d does not fit 128 bits" % (what, x))
        u = x & ((1 << 128) - 1)
        l, h = u & ((1 << 64) - 1), u >> 64
        lo.append(l - (1 << 64) if l >= 1 << 63 else l)
        hi.append(h - (1 << 64) if h >= 1 << 63 else h)
    d.copy_(torch.tensor([lo, hi], dtype=torch.int64).t())


def _write_numeric(s, ptr, dtype, col, n, what, exact):
    torch = s.torch
    t = _as_tensor(s, col, what)
    if t is None:
        if any(x is None for x in col):
            raise _ResultError("%s: None in a vector that has no NULLs" % what)
        if exact and any(isinstance(x, float) for x in col):
            raise _ResultError("%s: exact integers are required (got a float)" % what)
        t = torch.tensor(list(col), dtype=getattr(torch, dtype))
    if exact and t.is_floating_point():
        raise _ResultError("%s: exact integers are required (got %s)" % (what, t.dtype))
    if t.numel() != n:
        raise _ResultError("%s: %d values, expected %d" % (what, t.numel(), n))
    if n:
        _view(s, ptr, n * t.new_empty(0, dtype=getattr(torch, dtype)).element_size(), dtype, True).copy_(t)


def _strings(col, what):
    out = []
    for x in col:
        if isinstance(x, str):
            out.append(x.encode("utf-8"))
        elif isinstance(x, bytes):
            out.append(x)
        elif x is None:
            out.append(None)
        else:
            raise _ResultError("%s: expected strings, got %s" % (what, type(x).__name__))
    return out


def _write_strings(s, off_ptr, bytes_ptr, bytes_cap, strs, what, dev=False):
    """strs (bytes or None) -> offsets (n + 1 int64) and bytes at the two
    pointers (device memory when dev). The total bytes."""
    total = sum(len(b) for b in strs if b is not None)
    if total > bytes_cap:
        raise _ResultError("%s: %d bytes of strings, over the cap of %d" % (what, total, bytes_cap))
    blob = b"".join(b for b in strs if b is not None)
    offs, at = [0], 0
    for b in strs:
        at += len(b) if b is not None else 0
        offs.append(at)
    if dev:
        torch = s.torch
        _view(s, off_ptr, len(offs) * 8, "int64", True, True).copy_(torch.tensor(offs, dtype=torch.int64))
        if blob:
            _view(s, bytes_ptr, len(blob), "uint8", True, True).copy_(
                torch.frombuffer(bytearray(blob), dtype=torch.uint8))
        return total
    ct = s.ctypes
    (ct.c_int64 * len(offs)).from_address(off_ptr)[:] = offs
    if blob:
        ct.memmove(bytes_ptr, blob, len(blob))
    return total


def _fill_result(s, ptr, ret):
    S = s.structs
    res = S["Result"].from_address(ptr)
    cols = [res.cols[i] for i in range(res.ncols)]
    names = [c.name.decode() for c in cols]
    if isinstance(ret, dict):
        missing = [n for n in names if n not in ret]
        extra = [k for k in ret if k not in names]
        if missing or extra:
            raise _ResultError("the result's columns are %s; missing %s, unknown %s" % (names, missing, extra))
        values = [ret[n] for n in names]
    elif isinstance(ret, (list, tuple)):
        if len(ret) != len(names):
            raise _ResultError("%d columns returned, the result has %d (%s)" % (len(ret), len(names), names))
        values = list(ret)
    else:
        raise _ResultError("full() must return a dict {column: values} or a list of columns, got %s"
                           % type(ret).__name__)
    n = None
    for name, v in zip(names, values):
        k = len(v) if isinstance(v, (list, tuple)) else int(_as_tensor(s, v, name).numel())
        if n is None:
            n = k
        elif k != n:
            raise _ResultError("column %s has %d rows, %s has %d" % (name, k, names[0], n))
    n = n or 0
    if n > res.cap:
        raise _ResultError("%d rows, over the cap of %d" % (n, res.cap))
    ct = s.ctypes
    for c, name, v in zip(cols, names, values):
        what = "column %s (%s)" % (name, _RES_KINDS.get(c.type, "?"))
        if isinstance(v, (list, tuple)) and any(x is None for x in v):
            nulls = (ct.c_uint8 * max(1, n)).from_address(c.is_null)
            for i, x in enumerate(v):
                if x is None:
                    nulls[i] = 1
            if c.type != 4:
                fill = 0.0 if c.type == 2 else 0
                v = [fill if x is None else x for x in v]
        if c.type == 0:
            _write_numeric(s, c.i64, "int64", v, n, what, True)
        elif c.type == 1:
            t = _as_tensor(s, v, what)
            _write_ints128(s, c.dec, t if t is not None else list(v), n, what)
        elif c.type == 2:
            _write_numeric(s, c.f64, "float64", v, n, what, False)
        elif c.type == 3:
            _write_numeric(s, c.date, "int32", v, n, what, True)
        elif c.type == 4:
            if not isinstance(v, (list, tuple)):
                raise _ResultError("%s: expected a list of strings" % what)
            strs = _strings(v, what)
            if any(b is None for b in strs):
                nulls = (ct.c_uint8 * max(1, n)).from_address(c.is_null)
                for i, b in enumerate(strs):
                    if b is None:
                        nulls[i] = 1
            _write_strings(s, c.str_off, c.str_bytes, c.bytes_cap, strs, what)
        else:
            raise _ResultError("%s: unknown result type %d" % (what, c.type))
    res.nrows = n


def _fill_outputs(s, outs, ret):
    if not isinstance(ret, dict):
        raise _ResultError("core() must return a dict {output: n or values}, got %s" % type(ret).__name__)
    names = [n for n, _ in outs]
    missing = [n for n in names if n not in ret]
    extra = [k for k in ret if k not in names]
    if missing or extra:
        raise _ResultError("the outputs are %s; missing %s, unknown %s" % (names, missing, extra))
    torch = s.torch
    for name, v in outs:
        r = ret[name]
        what = "output %s (%s)" % (name, _TYPE_NAMES.get(v.type, "?"))
        if v.type == 8:
            if isinstance(r, tuple) and len(r) == 2 and all(isinstance(x, int) for x in r):
                n, nb = r
            elif isinstance(r, (list, tuple)):
                strs = _strings(r, what)
                if any(b is None for b in strs):
                    raise _ResultError("%s: None in a string vector" % what)
                n = len(strs)
                if n > v.cap:
                    raise _ResultError("%s: %d elements, over the cap of %d" % (what, n, v.cap))
                nb = _write_strings(s, v.data, v.bytes, v.bytes_cap, strs, what, s.cuda)
            else:
                raise _ResultError("%s: expected (n, nbytes) or a list of strings" % what)
            if not (0 <= n <= v.cap and 0 <= nb <= v.bytes_cap):
                raise _ResultError("%s: n=%d, nbytes=%d outside the caps %d, %d" % (what, n, nb, v.cap, v.bytes_cap))
            v.n, v.nbytes = n, nb
            continue
        if isinstance(r, bool) or (isinstance(r, int) and not isinstance(r, bool)):
            n = int(r)
            if not 0 <= n <= v.cap:
                raise _ResultError("%s: n=%d outside 0..%d" % (what, n, v.cap))
            v.n = n
            continue
        t = _as_tensor(s, r, what, s.cuda)
        seq = None
        if t is None:
            seq = list(r)
            n = len(seq)
        else:
            n = t.shape[0] if (v.type == 6 and t.dim() == 2) else t.numel()
        if n > v.cap:
            raise _ResultError("%s: %d elements, over the cap of %d" % (what, n, v.cap))
        dtype, es = _TYPES[v.type]
        if v.type == 6:
            _write_ints128(s, v.data, t if t is not None else seq, n, what, s.cuda)
        else:
            exact = v.type != 7
            if t is None:
                t = torch.tensor(seq, dtype=getattr(torch, dtype))
            if exact and t.is_floating_point():
                raise _ResultError("%s: exact integers are required (got %s)" % (what, t.dtype))
            if n:
                _view(s, v.data, n * es, dtype, True, s.cuda).copy_(t)
        v.n = n


def call(mode, a, b, c, d):
    """One candidate call (the shim's entry points): full(db, params, env)
    with a=db, b=params, c=result, d=env; core(inputs, outputs, env) with
    a=in, b=out, d=env. 0, or a PY_RC_* code with its line on stderr."""
    s = _state
    if s is None:
        _say("bridge", "the bridge was not initialised")
        return PY_RC_BRIDGE
    if not hasattr(s, "structs"):
        s.structs = _structs(s.ctypes)
    torch = s.torch
    torch.set_num_threads(max(1, s.threads))
    s.violation = None
    envs = s.structs["Env"].from_address(d)
    device, stream = "cpu", None
    try:
        if s.cuda:   # the harness's stream: torch's current stream and Triton's launches
            device, stream = "cuda", torch.cuda.ExternalStream(int(envs.stream or 0), device=s.device)
        if mode == "full":
            res = s.structs["Result"].from_address(c)
            spec = tuple((res.cols[i].name.decode(), _RES_KINDS.get(res.cols[i].type, "?"), res.cols[i].scale)
                         for i in range(res.ncols))
            pv, px = _params(s, b)
            env = Env(threads=envs.threads, device=device, stream=stream, result=spec, outputs=None, dicts=None,
                      params=px)
            args = (_db(s, a), pv, env)
        else:
            ins, dicts = _inputs(s, a)
            outs = _outset(s, b)
            spec = {n: (_TYPE_NAMES.get(v.type, "?"), v.scale, int(v.cap)) for n, v in outs}
            env = Env(threads=envs.threads, device=device, stream=stream, result=None, outputs=spec, dicts=dicts)
            args = (ins, _outputs(s, outs), env)
    except Exception as e:
        _say("bridge", "building the arguments: %s: %s" % (type(e).__name__, e))
        return PY_RC_BRIDGE
    g = {"__name__": "dkb_candidate", "__builtins__": dict(s.builtins)}
    # The hooks stay active until the answer is written: writing it may run
    # the candidate's code (a Tensor subclass, an object's __index__ or
    # __str__), and so may formatting its exception. Only the bridge's own
    # ctypes accesses while writing the answer are let through.
    failure = None
    ctx = torch.cuda.stream(stream) if stream is not None else _NoContext()
    s.active = True
    try:
        with ctx:
            failure = _run_candidate(s, mode, g, args, b, c)
    except BaseException as e:  # noqa: B036 (leaving the stream context: the candidate's stream state)
        failure = failure or ("exception", "%s: %s" % (type(e).__name__, _text(e)), PY_RC_EXCEPTION)
    finally:
        s.active = False
        s.filling = False
    _guard_libraries(s)
    if s.violation is not None:  # even when the candidate caught the exception: refused
        _say("forbidden", s.violation)
        return PY_RC_FORBIDDEN
    if failure:
        _say(failure[0], failure[1])
        return failure[2]
    return 0


class _NoContext:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def _run_candidate(s, mode, g, args, b, c):
    """The candidate's module executed, its entry called, its answer
    written: None, or (class, message, status)."""
    failure = None
    try:
        exec(s.code, g)
        fn = g.get(mode)
        if not callable(fn):
            raise _ResultError("the module defines no function %s()" % mode)
        ret = fn(*args)
        if s.violation is None:
            s.filling = True
            if mode == "full":
                _fill_result(s, c, ret)
            else:
                _fill_outputs(s, _outset(s, b), ret)
    except _ResultError as e:
        failure = ("result", _text(e), PY_RC_RESULT)
    except BaseException as e:  # noqa: B036 (SystemExit, KeyboardInterrupt too: the candidate's)
        cls = "result" if s.filling else "exception"
        failure = (cls, "%s: %s" % (type(e).__name__, _text(e)), PY_RC_RESULT if s.filling else PY_RC_EXCEPTION)
    return failure


def after_call():
    """After a call, outside its timed window, the device idle (the
    worker, through the shim's dkb_shim_after_call): on CUDA every block
    torch's caching allocator holds free is poisoned, so no tensor a later
    call allocates (torch.empty) shows this call's data, and the
    allocator's peak statistics are reset. 0, or PY_RC_BRIDGE."""
    s = _state
    if s is None or not s.cuda:
        return 0
    torch = s.torch
    try:
        torch.cuda.synchronize()
        for seg in torch.cuda.memory._snapshot().get("segments", ()):
            at = seg["address"]
            for blk in seg.get("blocks", ()):
                at = blk.get("address", at)
                if blk.get("state") == "inactive" and blk["size"] > 0:
                    _view(s, at, blk["size"], "uint8", True, True).fill_(_POISON_BYTE)
                at += blk["size"]
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    except Exception as e:
        _say("bridge", "after the call: %s: %s" % (type(e).__name__, e))
        return PY_RC_BRIDGE
    return 0


_POISON_BYTE = 0xA5   # DKB__CUDA_POISON


def _text(e):
    """str(e), which may be the candidate's code: never raises."""
    try:
        t = str(e)
        return t if isinstance(t, str) else "<not a string>"
    except BaseException:  # noqa: B036
        return "<unprintable>"


if __name__ == "__main__" and len(sys.argv) >= 4 and sys.argv[1] == "check":
    sys.exit(_check_main(sys.argv))
