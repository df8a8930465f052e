"""`gpu-audit catalog refresh`: the clouds' own price APIs → a dated, sourced price file."""
