package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/**
 * A tensor folder waited too long for the folders of other files being made at once to leave
 * it room within the folders' share of the heap ({@link TensorFolders}). Not a store failure:
 * counted apart from them (the review: as {@code StoreUnavailable} it raised a false store alert).
 */
public final class TensorFoldersBusyException extends WarpException {
    public TensorFoldersBusyException(String name, long waitedSeconds) {
        super("The tensor folder of " + name + " waited " + waitedSeconds + " s for the folders of other files being"
                + " made at once", "Read it again; or open fewer files' tensor folders at once, or raise WARP_HEAP.", null);
    }

    @Override
    public String type() {
        return "TensorFoldersBusy";
    }
}
