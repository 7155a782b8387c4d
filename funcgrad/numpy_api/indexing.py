"""funcgrad.numpy: indexing (``x[idx]``) and functional updates (``x.at[idx].set(v)``)."""
__all__: list[str] = []


def getitem(x, idx):  # placeholder until the indexing module lands
    raise NotImplementedError("indexing is not implemented yet")


def at(x):
    raise NotImplementedError("at[] is not implemented yet")
