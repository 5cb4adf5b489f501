package io.warpdata.vfs;

/**
 * Inode numbers of tensor files ({@code F.tensors/KEY.npy}), computed like archive members'
 * ({@link MemberInodes}): bits 63 and 62 set, then the slot of the tensor folder (31 bits), then
 * the file's position in its folder ({@link TensorFolder#position}, 31 bits). A listing or
 * lookup of a tensor then keeps nothing for it, and GETATTR and READ find the file from its
 * folder, kept by {@link TensorFolders} or made again from its header.
 *
 * <p>Why: the kernel holds an inode for each tensor file it has listed, for as long as it likes.
 * Tabled, each cost an entry and a node of about 330 bytes outside the folders' budget: audit
 * 39 saw 600,000 of them (about 200 MB) after six folders of 100,000 tensors were listed, and a
 * later publish through warpd ran out of heap.
 *
 * <p>A folder's positions come from its header alone (its files sorted by path), so they are the
 * same every time the folder is made, and a version never changes: an inode names the same
 * tensor for the life of the mount. A number that names no folder or a position past its last
 * file decodes as {@link StaleNodeException}, never another tensor's bytes.
 *
 * <p>Memory: one {@link Slot} per safetensors file whose folder the mount has reached.
 */
final class TensorInodes {
    private static final long KIND = MemberInodes.COMPUTED_BIT | MemberInodes.TENSOR_BIT;

    private final Slots<Key, Slot> slots = new Slots<>();

    /** A safetensors file: its artifact's slot and its member index position. */
    private record Key(int artifact, int member) {
    }

    /**
     * The tensor folder of one safetensors file, as the mount numbers it.
     *
     * @param source where the folder comes from
     * @param path   the folder's path in its version, for messages
     */
    record Slot(int number, TensorFolders.Source source, String path) {
        /** The inode of the file at {@code position} of this folder. */
        long inode(int position) {
            if (position < 0) {
                throw new IllegalArgumentException("position " + position);
            }
            return KIND | (long) number << MemberInodes.POSITION_BITS | position;
        }

        /** The folder: kept by {@link TensorFolders}, or made again from its header. */
        TensorFolder folder() {
            return source.folder();
        }
    }

    /**
     * The slot of {@code source}'s folder, numbered the first time the mount reaches it.
     *
     * @throws TooManyArtifactsException if every slot is taken
     */
    Slot slot(TensorFolders.Source source, String path) {
        return slots.slot(new Key(source.artifact().number(), source.member()), n -> new Slot(n, source, path));
    }

    /** Whether {@code nodeid} is a tensor file's computed inode (whether or not it names one). */
    static boolean isTensor(long nodeid) {
        return (nodeid & KIND) == KIND;
    }

    /**
     * The tensor file {@code nodeid} names.
     *
     * @throws StaleNodeException if it names none
     * @throws RuntimeException whatever making its folder again threw
     */
    Node.File file(long nodeid) {
        Slot slot = slotOf(nodeid);
        int position = (int) (nodeid & MemberInodes.POSITION_MASK);
        TensorFolder folder = slot.folder();
        if (position >= folder.fileCount()) {
            throw new StaleNodeException(nodeid);
        }
        return new Node.File(slot.source().artifact().version(), folder.file(position), false, nodeid);
    }

    private Slot slotOf(long nodeid) {
        Slot slot = slots.get(MemberInodes.slotNumber(nodeid, KIND));
        if (slot == null) {
            throw new StaleNodeException(nodeid);
        }
        return slot;
    }

    /** {@code ws/name@hash/artifact/F.tensors/KEY.npy} of a tensor inode, or {@code (node N)}: for log lines. */
    String describe(long nodeid) {
        try {
            Slot slot = slotOf(nodeid);
            int position = (int) (nodeid & MemberInodes.POSITION_MASK);
            // Only a folder kept now: a log line must not read a header (the review: the line of a
            // READ that failed as the store went down tried a second header read).
            TensorFolder kept = slot.source().kept();
            if (kept == null) {
                return slot.path() + "/(tensor file " + position + ")";
            }
            if (position >= kept.fileCount()) {
                throw new StaleNodeException(nodeid);
            }
            return slot.path() + "/" + kept.path(position);
        } catch (RuntimeException unknown) {
            return "(node " + Long.toUnsignedString(nodeid) + ")";
        }
    }

    /** Tensor folders numbered so far (for tests). */
    int slots() {
        return slots.size();
    }
}
