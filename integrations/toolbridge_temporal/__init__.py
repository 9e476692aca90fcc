"""toolbridge on Temporal: a fleet of workers serving conversations of any dialect.

`serve` starts `ConversationWorkflow` for one conversation; `worker` / `run_worker` (or
``toolbridge worker --temporal HOST:PORT --task-queue Q module:toolbox``) serve its
activities on any number of machines. The result store the toolbox uses decides whether a
call's handler runs, so Temporal redelivering an activity never runs a side effect twice:
share it between the workers (PostgreSQL across machines). See docs/scaling.md.
"""

from ._activities import CALL, CONVERSATION, Activities
from ._messages import ConversationInput, FleetSettings, Outcome, Progress
from ._serving import PASSED_THROUGH, run_worker, sandbox, serve, tracing_interceptors, worker
from ._workflow import ConversationWorkflow

__all__ = [
    "CALL", "CONVERSATION", "Activities", "ConversationInput", "ConversationWorkflow",
    "FleetSettings", "Outcome", "PASSED_THROUGH", "Progress", "run_worker", "sandbox", "serve",
    "tracing_interceptors", "worker",
]
