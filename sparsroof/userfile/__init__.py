"""Reading the user's own text files (specs, budgets, manifests, measured runs, saved
results, calibrations) one way, with limits, and checking every field in them.

Every reader takes ``fail``, a function that turns a problem into the caller's own
:class:`~sparsroof.errors.SparsroofError` (so each file keeps its error class and exit
code). What a reader refuses, it refuses in one line naming the file and the line or key:

- anything but a regular file (a directory, a device such as /dev/zero, a named pipe,
  a socket), without opening it for reading or waiting on it;
- a file past its size limit (:data:`MAX_TEXT_BYTES`; :data:`MAX_CONFIG_BYTES` for YAML),
  nested past :data:`MAX_NESTING` levels or holding a number of more than 1,000 digits;
- YAML whose aliases expand to more than :data:`MAX_YAML_VALUES` values, or refer to
  the value that holds them;
- a field of the wrong type or out of range (:mod:`.fields`), shown cut to 40 characters.

Large CSV tables are read a row at a time (:func:`iter_csv`). :func:`capped` keeps the
error lines of a file with many bad rows to a few of each kind.
"""

from .csvfile import CsvTable, iter_csv, read_csv
from .fields import (
    LARGEST,
    FieldError,
    control_character,
    described,
    finite_numbers,
    flag,
    number,
    optional_text,
    shown,
    text,
    whole_number,
)
from .files import (
    MAX_CONFIG_BYTES,
    MAX_NESTING,
    MAX_TEXT_BYTES,
    check_shape,
    open_regular,
    read_json,
    read_json_items,
    read_text,
    replaced,
    write_text_whole,
)
from .repeats import capped
from .yamlfile import MAX_YAML_VALUES, load_yaml, read_yaml

__all__ = [
    "LARGEST",
    "MAX_CONFIG_BYTES",
    "MAX_NESTING",
    "MAX_TEXT_BYTES",
    "MAX_YAML_VALUES",
    "CsvTable",
    "FieldError",
    "capped",
    "check_shape",
    "control_character",
    "described",
    "finite_numbers",
    "flag",
    "iter_csv",
    "load_yaml",
    "number",
    "open_regular",
    "optional_text",
    "read_csv",
    "read_json",
    "read_json_items",
    "read_text",
    "read_yaml",
    "replaced",
    "shown",
    "text",
    "whole_number",
    "write_text_whole",
]
