"""Reading and writing triplet files.

:func:`read_triplets` reads the triplet files people have (layouts
:data:`TRIPLET_LAYOUTS`: list-order rows ``head, closer, farther``; crowd answers
``head, left, right, winner``; cblearn's ``X, y`` as list-boolean or list-count) from
CSV/TSV/whitespace text, parsed by pandas imported on first use, or ``.npy``/``.npz``
files, which are never unpickled and whose declared sizes are checked against the
limits below before anything is read. :func:`write_triplets` writes every layout.
"""

from .layouts import COLUMN_NAMES, TRIPLET_FORMATS, TRIPLET_LAYOUTS, TripletData
from .reading import read_triplets
from .writing import spreadsheet_safe, write_triplets

#: Largest declared size in bytes of one array of a .npy/.npz, and of the labels that ``n_items`` or
#: ``relabel=False`` declare (8 bytes an item; ``limits={"array_bytes": ...}`` per call).
MAX_ARRAY_BYTES = 1 << 30
#: Largest expansion (uncompressed / compressed size) of an .npz member above 16 MiB.
MAX_COMPRESSION_RATIO = 32
#: Largest total length in characters of the distinct text labels of one file.
MAX_LABEL_BYTES = 1 << 28

__all__ = ["TripletData", "read_triplets", "write_triplets", "spreadsheet_safe", "TRIPLET_LAYOUTS",
           "TRIPLET_FORMATS", "COLUMN_NAMES", "MAX_ARRAY_BYTES", "MAX_COMPRESSION_RATIO", "MAX_LABEL_BYTES"]
