"""torch.utils.model_zoo: the older name of torch.hub's weight loading (torchvision imports its
`tqdm` from here)."""
from tensorlib.hub import load_state_dict_from_url as load_url, tqdm

__all__ = ["load_url", "tqdm"]
