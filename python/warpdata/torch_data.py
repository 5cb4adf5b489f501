"""torch integration: ``ds.to_torch(batch_size, shard="auto")``."""

from .errors import missing


def _tensorize(batch):
    import torch
    out = {}
    for k, v in batch.items():
        if v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            out[k] = torch.tensor(v)
        else:
            out[k] = v
    return out


def iterable(table, batch_size=1024, shard="auto", columns=None, where=None, tensors=True):
    """A torch IterableDataset over the batches of ``table`` for this rank; each DataLoader worker
    reads its own part of the rank's rows (the one row split: every row exactly once)."""
    try:
        from torch.utils.data import IterableDataset
    except ImportError:
        raise missing("torch", "to_torch()", "python3-torch") from None

    class WarpBatches(IterableDataset):
        def __iter__(self):
            for b in table.batch_dicts(batch_size, columns=columns, shard=shard, where=where):
                yield _tensorize(b) if tensors else b

    return WarpBatches()


def to_torch(table, batch_size=1024, shard="auto", columns=None, where=None, num_workers=0, tensors=True,
             **loader_args):
    batches = iterable(table, batch_size, shard, columns, where, tensors)  # says so first if torch is missing
    from torch.utils.data import DataLoader
    return DataLoader(batches, batch_size=None,
                      num_workers=num_workers, **loader_args)
