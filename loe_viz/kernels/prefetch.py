"""A hint to the CPU, for kernels that write many streams at once.

A counting sort into ``B`` tiles (the sampler's and :func:`loe_viz.kernels.btl.tile_order`'s)
writes ``B`` streams side by side, more than the hardware prefetchers follow: every new
cache line of a stream waits for memory. :func:`prefetch_write` asks for the line of an
element ahead of use, with the intent to write it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: How far ahead of a stream's next free place its cache lines are fetched (elements).
WRITE_AHEAD = 64


@intrinsic
def prefetch_write(typingctx, arr, index):
    """Fetch the cache line of ``arr[index]`` for writing (LLVM's ``prefetch``): a hint only,
    no effect on any value; ``index`` must lie inside ``arr``."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.prefetch", [byte_ptr],
                                              ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]))
        # write, keep in every cache level, data cache
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, index), codegen
