"""The parts of tensorlib.nn.functional, one file per family; functional.py re-exports them."""
