// Forwarding header: PyTorch extension sources include this name.
#pragma once
#include "tensorlib/extension.h"
