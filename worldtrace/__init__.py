"""worldtrace's command line: the one package besides `assets/` that may import every library
(sources, quality, bench, training). One module per command group in `worldtrace/commands/`."""
