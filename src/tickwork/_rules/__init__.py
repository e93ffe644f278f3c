"""Pure rules: decisions over plain values, no I/O; they import only values."""
