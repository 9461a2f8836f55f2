"""Device-agnostic C kernel generator for the GPU backends: a dialect (`cdialect.CDialect`)
says how OpenCL C or CUDA C spells types, thread indices, barriers and half-precision loads;
`templates` writes every primitive's kernel source in terms of a dialect; `cache` keeps
compiled kernels on disk by content."""
