"""Re-export of :mod:`jaxlab.serving.token_router.engine` at its former path (``from jaxlab.serving.engine import
TokenRouterEngine, table_router``)."""

from jaxlab.serving.token_router.engine import (
    EngineStats,
    Subserver,
    TokenRouterEngine,
    measure_step_cost,
    reference_decode,
    table_router,
)

__all__ = ["EngineStats", "Subserver", "TokenRouterEngine", "measure_step_cost", "reference_decode", "table_router"]
