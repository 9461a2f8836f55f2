"""A stand-in for pycuda (tests only): the driver calls the CUDA backend makes, over host
memory, with kernels that record their launches instead of running."""
