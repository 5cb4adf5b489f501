"""torch integration: ``ds.to_torch(batch_size, shard="auto")``."""

import random

from .dataset import resolve_shard
from .errors import BadRequestError, missing

try:
    import torch
    from torch.utils.data import IterableDataset as _Base
except ImportError:  # iterable() says so; the module itself imports without torch
    torch = None
    _Base = object

# DuckDB type -> torch dtype name: each column's tensors have one dtype, from the table's schema,
# whatever a batch holds. Other types (DECIMAL, HUGEINT, UBIGINT, text, nested) stay lists.
_DTYPES = {
    "DOUBLE": "float64", "FLOAT8": "float64", "FLOAT": "float32", "REAL": "float32", "FLOAT4": "float32",
    "BIGINT": "int64", "INT8": "int64", "LONG": "int64", "INTEGER": "int32", "INT": "int32", "INT4": "int32",
    "SMALLINT": "int16", "INT2": "int16", "TINYINT": "int8", "INT1": "int8",
    "UTINYINT": "uint8", "USMALLINT": "int32", "UINTEGER": "int64", "BOOLEAN": "bool", "BOOL": "bool",
}


def tensor_dtypes(schema):
    """{column: torch dtype name} for the columns ``to_torch`` gives as tensors."""
    return {c: _DTYPES[t.strip().upper()] for c, t in schema.items() if t.strip().upper() in _DTYPES}


def column_tensor(values, dtype, column, table_name, for_lists="pass tensors=False for lists"):
    """``values`` of ``column`` as a tensor of its schema's ``dtype``: a NULL is NaN in a float column
    and a BadRequestError in any other, whose next step ends with ``for_lists``."""
    if None in values:
        if dtype.startswith("float"):
            values = [float("nan") if x is None else x for x in values]
        else:
            raise BadRequestError(
                "column %r of table %r holds a NULL, which a %s tensor cannot" % (column, table_name, dtype),
                "leave those rows out (where=\"%s IS NOT NULL\"), leave the column out (columns=[...]), or %s"
                % (column.replace('"', '""'), for_lists))
    return torch.tensor(values, dtype=getattr(torch, dtype))


def _tensorize(batch, dtypes, table_name):
    return {k: v if dtypes.get(k) is None else column_tensor(v, dtypes[k], k, table_name) for k, v in batch.items()}


def _draw(buffer, rng):
    """A row taken at random from ``buffer`` in O(1): swapped with the last, then popped."""
    i = rng.randrange(len(buffer))
    buffer[i], buffer[-1] = buffer[-1], buffer[i]
    return buffer.pop()


class WarpBatches(_Base):
    """A torch IterableDataset over the batches of a table for this rank; each DataLoader worker reads
    its own part of the rank's rows. Defined at module level so that it pickles: DataLoader workers
    started with spawn or forkserver get a copy.

    even (None: when there is more than one rank): every rank reads as many rows, and each worker as
    many as the same worker of every other rank, so every rank makes as many batches: distributed
    training runs the same number of steps on each (audit 24: 120 against 81 batches left rank 0's
    last steps all-reducing with rank 1's next epoch, then hanging). even=False: every row exactly
    once (the one row split). A ``where`` filter keeps rows per rank apart, since what it keeps of
    each rank's rows is known only once read: publish the filtered rows as a view instead.

    shuffle=True shuffles rows within a buffer of ``shuffle_buffer`` rows, in a new order every epoch
    (each worker its own: torch gives every worker of every epoch its own seed, a persistent worker
    counts its epochs, and the rank is mixed in, so that ranks seeded alike do not shuffle alike).
    drop_last=True leaves out a worker's last batch when it is short."""

    def __init__(self, table, batch_size=1024, shard="auto", columns=None, where=None, tensors=True,
                 shuffle=False, shuffle_buffer=None, even=None, drop_last=False):
        self.table = table
        self.batch_size = batch_size
        self.shard = shard
        self.columns = columns
        self.where = where
        self.dtypes = tensor_dtypes(table.schema()) if tensors else None
        self.shuffle = shuffle
        self.shuffle_buffer = shuffle_buffer or 16 * batch_size
        self.rank, world, _, _ = resolve_shard(shard)
        self.even = world > 1 if even is None else bool(even)
        self.drop_last = drop_last
        self._epochs = 0

    def _batches(self):
        batches = self.table.batch_dicts(self.batch_size, columns=self.columns, shard=self.shard, where=self.where,
                                         even=self.even)
        if not self.drop_last:
            return batches
        return (b for b in batches if not b or len(next(iter(b.values()))) == self.batch_size)

    def _shuffled(self, rng):
        """The rows of ``_batches()`` in batches of batch_size, drawn at random from a buffer."""
        names, buffer = None, []
        for b in self._batches():
            names = list(b)
            buffer.extend(zip(*(b[n] for n in names)))
            while len(buffer) >= self.shuffle_buffer + self.batch_size:
                yield names, [_draw(buffer, rng) for _ in range(self.batch_size)]
        rng.shuffle(buffer)
        for i in range(0, len(buffer), self.batch_size):
            yield names, buffer[i:i + self.batch_size]

    def __iter__(self):
        self._epochs += 1
        if self.shuffle:
            rng = random.Random(hash((torch.initial_seed(), self._epochs, self.rank)))
            batches = ({n: [row[i] for row in rows] for i, n in enumerate(names)} for names, rows in self._shuffled(rng))
        else:
            batches = self._batches()
        for b in batches:
            yield _tensorize(b, self.dtypes, self.table.name) if self.dtypes is not None else b


def iterable(table, batch_size=1024, shard="auto", columns=None, where=None, tensors=True, shuffle=False,
             shuffle_buffer=None, even=None, drop_last=False):
    """A torch IterableDataset over the batches of ``table`` for this rank (``WarpBatches``)."""
    if torch is None:
        raise missing("torch", "to_torch()", "python3-torch")
    return WarpBatches(table, batch_size, shard, columns, where, tensors, shuffle, shuffle_buffer, even, drop_last)


def to_torch(table, batch_size=1024, shard="auto", columns=None, where=None, num_workers=0, tensors=True,
             shuffle=False, shuffle_buffer=None, even=None, drop_last=False, **loader_args):
    batches = iterable(table, batch_size, shard, columns, where, tensors, shuffle,
                       shuffle_buffer, even, drop_last)  # says so first if torch is missing
    for taken in ("sampler", "batch_sampler"):
        if taken in loader_args:
            raise BadRequestError("to_torch() makes its own batches, so %s= cannot be given" % taken,
                                  "pass batch_size= and shuffle= to to_torch(); other DataLoader options "
                                  "(pin_memory, persistent_workers, ...) pass through")
    from torch.utils.data import DataLoader
    return DataLoader(batches, batch_size=None, num_workers=num_workers, **loader_args)
