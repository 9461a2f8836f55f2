"""RemovableHandle: what register_*hook returns; `handle.remove()` takes the hook out."""


class RemovableHandle:
    def __init__(self, container, hook, key=None):
        self._container = container
        self._hook = hook
        self._key = key

    def remove(self):
        if isinstance(self._container, dict):
            self._container.pop(self._key, None)
        elif self._hook in self._container:
            self._container.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
