"""candidate.py: the ABI between the DataKernelBench harness and a Python
candidate implementation of one TPC-H query (the Python counterpart of
candidate.h; docs/harness.md, "Python candidates"). Nothing here is
imported by a candidate: this module only documents, with stand-in
signatures, what the harness hands over and what it expects back.

A candidate is one file, qNN.full.py or qNN.core.py, evaluated with

    dkb eval DIR --target python --data STORE          (torch on the CPU)
    dkb eval DIR --target triton --data STORE          (the GPU: torch CUDA
                                                        tensors, Triton kernels)

It is a module that defines, at module level, exactly the mode's function:

    def full(db, params, env): ...        # qNN.full.py: the whole query
    def core(inputs, outputs, env): ...   # qNN.core.py: the query's core

and may define helpers (and, on the CUDA target, @triton.jit kernels). It
may import only: torch, triton, numpy, math (any of their modules but the
few that reach the system: torch.utils.cpp_extension, torch.hub,
torch.multiprocessing, torch.distributed, torch.utils.data, numpy.ctypeslib,
numpy.f2py, ...), typing and __future__. It may not use open, exec, eval,
compile, getattr/setattr/delattr, globals/locals/vars, input, breakpoint,
private or dunder attributes (x._y, x.__y__), names that lead out of the
libraries (os, sys, subprocess, ctypes, socket, ..., tb_frame, f_back, ...),
or assign into an imported module or name (torch.x = ...). The build step
checks this statically (forbidden_symbol, naming the line); in the worker an
import hook and an audit hook refuse the same at run time (a refused open,
process, socket or import fails the row as forbidden_symbol even when the
candidate catches the exception), under the worker's system call filter.

On the GPU (--target triton): every tensor handed over is a CUDA tensor
(zero-copy over the harness's device memory: a write to an input is caught
by checksums, wrote_input; core outputs are the harness's poisoned device
buffers); the full-mode result may be CUDA tensors (copied back by the
harness). @triton.jit kernels compile in the first, untimed call and are
kept across calls (Triton's cache lives in the row's work directory); a
module-level @triton.jit function without default arguments (and with
plain decorator arguments) that every call defines the same way launches
without Triton's per-object set-up (source read, dependency hash, binder:
milliseconds), which it takes over from the earlier call's object, Triton
still checking before each launch the globals the kernel reads;
torch's freed device blocks are poisoned after every call, so torch.empty
on the device never shows an earlier call's data. triton.autotune re-tunes
in every call: prefer fixed configurations.

Each call starts afresh: the module is executed anew before every call (its
top-level code is part of the call's time: keep it to imports and
definitions), so nothing kept in module globals, default arguments,
closures or its own classes survives to the next call; new torch tensors
are filled with junk by the allocator (torch.empty never shows an earlier
call's data). Inputs are read-only views of the harness's memory (a write
faults: wrote_input). The harness times the calls, with the baseline
interleaved; use at most env.threads threads (the harness sets torch's).

Data encodings (docs/store.md): dates are int32 days since 1970-01-01;
DECIMAL(15,2) values are int64 hundredths (scale 2), a product of two has
scale 4; low-cardinality strings are uint8 codes into a sorted dictionary
(code order is string order); free text is a Text (offsets, data).

Status: the function returns normally (its answer) or raises. A raised
exception is returned_error naming it ("raised ValueError: ..."); an answer
of the wrong shape is returned_error too ("its answer is not what the ABI
asks for: ..."); a wrong one wrong_answer.
"""


class Text:
    """A string vector: `offsets` (int64 tensor, n + 1 entries, offsets[0]
    == 0) into `data` (uint8 tensor of the characters); row r is
    data[offsets[r]:offsets[r+1]]. len(text) is n."""
    offsets = None
    data = None


class Table:
    """One table of the database (full mode).

    table["l_shipdate"]   the column: a read-only 1-D torch tensor that is
                          a zero-copy view of the harness's memory (CPU:
                          the store's read-only mapping; CUDA: the resident
                          device copy, via __cuda_array_interface__), dtype
                          by the column's type: int32 (dates, keys), int64
                          (decimals at their scale, keys), float64, uint8
                          (dictionary codes), bool; TEXT columns: a Text
    table.rows            rows (int)
    table.columns         the column names (tuple)
    table.dict("l_returnflag")  a uint8 column's dictionary: tuple of str,
                          sorted; code c is dict[c]; None for other columns
    """


class Database:
    """The database (full mode): db["lineitem"] is a Table; db.tables the
    table names; db.scale_factor the store's scale factor."""


class Env:
    """What the candidate may use (read-only).

    env.threads   threads to use (torch's intra-op threads are set to it)
    env.device    "cpu" (or "cuda" on the CUDA target)
    env.stream    None on CPU; on CUDA the harness's stream (a
                  torch.cuda.ExternalStream), which is torch's current
                  stream during the call: torch operations and Triton
                  launches go there unless you choose another (the harness
                  times until the whole device is idle)
    env.params    full mode: the exact parameters, name -> (kind, i, scale):
                  ("date", days, 0), ("decimal", 6, 2) for 0.06, ("int",
                  24, 0), ("string", "BUILDING", 0)
    env.result    full mode: the result's columns, ((name, kind, scale),
                  ...), kind "int", "decimal", "float", "date" or "string"
    env.outputs   core mode: name -> (type, scale, cap) of each output,
                  type as in candidate.h ("I64", "I128", "F64", "STR", ...)
    env.dicts     core mode: a uint8 input's name -> its dictionary (tuple)
    """


def full(db, params, env):
    """Full mode: the whole query.

    db      a Database (read-only, zero-copy)
    params  dict name -> value, names as `dkb sql qNN --params-json` lists:
            int, date (int days since 1970-01-01), decimal (float, for
            convenience: the exact value is env.params[name]), string (str)
    env     an Env

    Returns the result: a dict {column name: values} with every column of
    env.result, or a list of the columns in that order. Values: a 1-D
    tensor or numpy array, or a list (None for SQL NULL, e.g. a sum over no
    rows). Every column has the same number of rows (at most the harness's
    cap, twice the baseline's largest result). By kind: int, int64 values;
    decimal, exact integers at the column's scale (revenue at scale 4:
    1193053.2253 is 11930532253; a float tensor is refused); float,
    float64; date, int days; string, a list of str. The rows in the query's
    ORDER BY order (ties in any order).

    Example (Q6): keep = (ship >= lo) & ... ; return {"revenue":
    (price[keep] * disc[keep]).sum().reshape(1)}
    """
    raise NotImplementedError


def core(inputs, outputs, env):
    """Core mode: the query's core over the baseline's prepared inputs.

    inputs   dict name -> value: each prepared vector as a read-only tensor
             (zero-copy; I128 vectors as an int64 (n, 2) tensor of low,
             high halves; STR vectors a Text) and each scalar as a Python
             value (int in the units the baseline's prepare uses, e.g. days
             or hundredths; float; str, e.g. a LIKE pattern)
    outputs  dict name -> writable tensor over the harness's output buffer
             of `cap` elements (I128: an int64 (cap, 2) view; STR: a Text of
             cap + 1 offsets and bytes_cap bytes), filled with garbage on
             entry: the same names, types and scales as the baseline's core
             outputs, which the baseline's finish then consumes
    env      an Env

    Returns a dict with every output's name mapped to either the number of
    elements it wrote in place into outputs[name] (STR: (n, nbytes)), or
    its values (a tensor, numpy array or list; STR: a list of str), which
    the harness copies into the buffer (the copy counts in the call's
    time). Elements not written hold garbage: report only what you wrote.

    Example (Q6): out = outputs["revenue"]; out[0, 0] = total; out[0, 1] =
    -1 if total < 0 else 0; return {"revenue": 1}
    """
    raise NotImplementedError
