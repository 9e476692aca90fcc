from ces_support import toolbox

__all__ = ["toolbox"]
