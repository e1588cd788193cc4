"""BenchExec tool-info modules of apc (give `apc_toolinfo.apc` as the tool)."""
