"""The parts of tensorlib.serialization: the native checkpoint format (`native`), the safe
rebuilding of objects (`globals`), `.safetensors` files (`safetensors`) and PyTorch `.pt`
checkpoints (`torch_pt`). Nothing here unpickles with the standard, code-running unpickler."""
