package io.warpdata.store;

/** A remote URI that names no store Warp can open. */
public final class InvalidRemoteException extends StoreException {
    public InvalidRemoteException(String remote, String why) {
        super("Invalid remote '" + remote + "': " + why,
                "Use s3://bucket[/prefix] (e.g. s3://ml-data/warp) or file:///absolute/dir"
                        + " (e.g. file:///srv/warp-store); pass it as --remote or WARP_REMOTE.",
                null);
    }

    @Override
    public String type() {
        return "InvalidRemote";
    }
}
