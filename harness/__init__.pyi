"""harness's public surface, written once: what an extension of rmh may use from the harness
(harness.extensions lists the points it plugs into), and where each name lives.
harness/__init__.py reads this file at import (no name is listed anywhere else), and type
checkers read it as the package's stub, so both see the same table.

One line per name, `from .module import Name as Name`; a name public under another name than
its own is imported as `_Public` and bound by `Public = _Public` at the end (a stub exports a
renamed import only so). No public name is also a module of this package: importing that
module would bind its name on the package to the module instead.
"""

from .ask import LoopParams as LoopParams
from .ask import ask as _ask_loop
from .commands.notes import positive_int as positive_int
from .commands.output import CommandFailed as CommandFailed
from .commands.output import fail as fail
from .compose import search_params as search_params
from .config import HooksSection as HooksSection
from .config import load as _load_config
from .hooks_daemon import daemon_request as daemon_request
from .hooks_index import refresh as _refresh_hooks_index
from .hooks_memory import prompt_memory as prompt_memory
from .hooks_recall import recall as _prompt_recall
from .ray_jobs import RayFailed as RayFailed
from .ray_jobs import cluster as cluster
from .ray_jobs import ray_module as ray_module
from .ray_jobs import worker_error as worker_error

ask_loop = _ask_loop
load_config = _load_config
prompt_recall = _prompt_recall
refresh_hooks_index = _refresh_hooks_index
