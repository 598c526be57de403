"""Argument checks shared by the package's front functions: each raises OptionError (a
ValueError) or IdError (an IndexError) naming the argument and what was expected."""

import contextlib
import numbers
import os

import torch

from .errors import IdError, MissingFileError, OptionError

def _bad(name, message):
    return OptionError(message, name)


_INTEGER_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def optional_tensor(tensor):
    """None for the engine's undefined tensors (absent edge ids, weights, labels)."""
    return tensor if isinstance(tensor, torch.Tensor) else None


def as_tensor(name, value):
    """A torch.Tensor from a tensor, a NumPy array or a sequence."""
    if isinstance(value, torch.Tensor):
        return value
    try:
        return torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as error:
        raise _bad(name, f"{name} must be a tensor, got {type(value).__name__}") from error


def integer_tensor(name, value, dim=None):
    """An int64 tensor (any integer dtype converted), with `dim` dimensions when given."""
    tensor = as_tensor(name, value)
    if tensor.dtype not in _INTEGER_DTYPES:
        raise _bad(name, f"{name} must hold integers, got dtype {tensor.dtype}")
    if dim is not None and tensor.dim() != dim:
        raise _bad(name, f"{name} must have {dim} dimension(s), got shape {list(tensor.shape)}")
    return tensor.to(torch.int64).contiguous()


def float_tensor(name, value, length=None):
    tensor = as_tensor(name, value)
    if not tensor.is_floating_point():
        raise _bad(name, f"{name} must hold floats, got dtype {tensor.dtype}")
    if length is not None and (tensor.dim() != 1 or tensor.numel() != length):
        raise _bad(name, f"{name} must be 1-D with {length} values, got shape {list(tensor.shape)}")
    if tensor.dtype not in (torch.float32, torch.float64):
        tensor = tensor.to(torch.float32)
    return tensor.contiguous()


def times(name, value, length):
    """int64 times, one per node, edge or seed (``length`` of them)."""
    tensor = integer_tensor(name, value, dim=1)
    if tensor.numel() != length:
        raise _bad(name, f"{name} must hold {length} times, got {tensor.numel()}")
    return tensor


def node_ids(name, value, num_nodes):
    """int64 node ids in [0, num_nodes), from ids or from a boolean mask over the nodes."""
    tensor = as_tensor(name, value)
    if tensor.dtype == torch.bool:
        if tensor.dim() != 1 or tensor.numel() != num_nodes:
            raise _bad(name, 
                f"{name}: a boolean mask must have one entry per node ({num_nodes}), "
                f"got shape {list(tensor.shape)}")
        return tensor.nonzero().flatten()
    ids = integer_tensor(name, tensor)
    if ids.numel() > 0:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= num_nodes:
            bad = low if low < 0 else high
            raise IdError(f"{name}: node id {bad} is outside [0, {num_nodes}) (the graph's nodes)")
    return ids


def _is_integer(value):
    if isinstance(value, torch.Tensor):  # a 0-d integer tensor, e.g. an element of one
        return value.dim() == 0 and value.dtype in _INTEGER_DTYPES
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def integer_list(name, value):
    """A list of ints from a sequence of integers (Python's or NumPy's; bool, floats and strings
    are refused, never truncated or split into characters)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise _bad(name, f"{name} must be a list of integers, got {value!r}")
    values = list(value)
    bad = [v for v in values if not _is_integer(v)]
    if bad:
        raise _bad(name, f"{name} must be a list of integers, got {bad[0]!r} "
                         f"({type(bad[0]).__name__}) in {values!r}")
    return [int(v) for v in values]


def fanouts(name, value, allow_zero=False):
    """Per-layer fanouts; `allow_zero` for one edge type's, where 0 skips the type."""
    values = integer_list(name, value)
    lowest = 0 if allow_zero else 1
    if not values or any(v < lowest and v != -1 for v in values):
        raise _bad(name, f"{name} must list at least one layer, each -1 (all neighbors) or "
                          f"{'0 or more' if allow_zero else 'positive'}, got {values}")
    return values


def choice(name, value, choices):
    if value not in choices:
        raise _bad(name, f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def positive(name, value):
    if not _is_integer(value) or value < 1:
        raise _bad(name, f"{name} must be a positive integer, got {value!r}")
    return value


def integer(name, value):
    if not _is_integer(value):
        raise _bad(name, f"{name} must be an integer, got {value!r}")
    return int(value)


def non_negative(name, value):
    if not _is_integer(value) or value < 0:
        raise _bad(name, f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def existing_path(name, value):
    """A path that exists (MissingFileError naming the argument otherwise)."""
    text = path(name, value)
    if not os.path.exists(text):
        raise MissingFileError(f"{name}: '{text}' does not exist")
    return text


def byte_size(name, value):
    """Bytes from an integer or a size such as ``"256M"`` or ``"2G"`` (K, M, G: powers of 1024,
    as the CLI's sizes)."""
    if _is_integer(value) and value >= 0:
        return int(value)
    if isinstance(value, str):
        text = value.strip().upper().removesuffix("B")
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        number = text[:-1] if scale > 1 else text
        try:
            size = float(number) * scale
        except ValueError:
            size = -1
        if size >= 0:
            return int(size)
    raise _bad(name, f"{name} must be a number of bytes or a size such as '256M', got {value!r}")


def output_path(name, value, overwrite):
    """A path to write a directory to: one that exists needs ``overwrite=True`` (checked here,
    so that the message names the Python argument, not the CLI's --force)."""
    text = path(name, value)
    if os.path.exists(text) and not overwrite:
        raise _bad("overwrite", f"{name}: '{text}' already exists (pass overwrite=True to "
                                f"replace it)")
    return text


def path(name, value):
    try:
        return os.fspath(value)
    except TypeError as error:
        raise _bad(name, f"{name} must be a path, got {type(value).__name__}") from error


def device(name, value):
    """A torch.device from None (the CPU), a name or a torch.device; a CUDA device must be
    usable by this process's torch."""
    if value is None:
        return torch.device("cpu")
    try:
        result = torch.device(value)
    except (RuntimeError, TypeError) as error:
        raise _bad(name, f"{name} must be 'cpu', 'cuda', 'cuda:N' or a torch.device, got "
                         f"{value!r} ({error})") from None
    if result.type == "cpu":
        return result
    if result.type != "cuda":
        raise _bad(name, f"{name}={value!r}: graphloom delivers batches to 'cpu' or 'cuda' devices")
    if not torch.cuda.is_available():
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        raise _bad(name, f"{name}={value!r}: this torch ({torch.__version__}, {build}) sees no "
                         f"CUDA device; pass device='cpu'")
    if result.index is not None and result.index >= torch.cuda.device_count():
        raise _bad(name, f"{name}={value!r}: this machine has {torch.cuda.device_count()} CUDA "
                         f"device(s)")
    return result


@contextlib.contextmanager
def renamed_arguments(names):
    """Re-raises an OptionError about one of graphloom's arguments under the name the caller
    knows it by (``names``: graphloom's name -> the caller's), for the front ends that take
    DGL's or PyG's arguments."""
    try:
        yield
    except OptionError as error:
        if error.field not in names:
            raise
        theirs = names[error.field]
        raise OptionError(f"{theirs}: {error}", theirs) from None
    except IdError as error:  # "items: node id ..." -> "input_nodes: node id ..."
        ours, _, rest = str(error).partition(": ")
        if ours not in names:
            raise
        raise IdError(f"{names[ours]}: {rest}") from None
