// Forwarding header: PyTorch CUDA extension sources include this name.
#pragma once
#include "tensorlib/extension.h"
