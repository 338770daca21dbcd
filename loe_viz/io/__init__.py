"""Reading and writing triplet files.

:func:`read_triplets` turns the triplet files people actually have into a
validated list-order array plus the item labels; :func:`write_triplets` writes
every layout it reads. A file that cannot be read raises ``ValueError`` naming
the file, the line and the problem; NumPy files are never unpickled, and their
declared sizes are checked against the limits below before anything is read.

Layouts
-------
``"list-order"``
    One triplet per row, ``(head, closer, farther)``: "head is closer to closer
    than to farther" (cblearn's ``list-order``, salmon's head/winner/loser).
``"crowd"``
    ``head, left, right`` and an answer column naming the item the person
    chose as closer to ``head``.
``"list-boolean"`` / ``"list-count"``
    cblearn's ``X, y``: row ``X[r] = (head, j, k)`` with ``y[r]`` True (or +1)
    when ``j`` is the closer item and False (or -1, or 0) when ``k`` is.

Text files (CSV, TSV, ``;``- or whitespace-separated) are parsed by pandas
(imported on first use) and may carry a header naming the columns
(:data:`COLUMN_NAMES`). Integer ids that do not fill ``0..n-1`` and text labels
are mapped to contiguous indices; :attr:`TripletData.labels` maps them back.
"""

from .layouts import COLUMN_NAMES, TRIPLET_FORMATS, TRIPLET_LAYOUTS, TripletData
from .reading import read_triplets
from .writing import spreadsheet_safe, write_triplets

#: Largest declared size, in bytes, of one array of a ``.npy``/``.npz`` file
#: (``read_triplets(..., limits={"array_bytes": ...})`` overrides it per call).
MAX_ARRAY_BYTES = 1 << 30
#: Largest expansion (uncompressed / compressed size) of an ``.npz`` member above 16 MiB.
MAX_COMPRESSION_RATIO = 32
#: Largest total length, in characters, of the distinct text labels of one file.
MAX_LABEL_BYTES = 1 << 28

__all__ = ["TripletData", "read_triplets", "write_triplets", "spreadsheet_safe", "TRIPLET_LAYOUTS",
           "TRIPLET_FORMATS", "COLUMN_NAMES", "MAX_ARRAY_BYTES", "MAX_COMPRESSION_RATIO", "MAX_LABEL_BYTES"]
