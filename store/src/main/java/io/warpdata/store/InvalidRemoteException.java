package io.warpdata.store;

/** A remote URI that names no store Warp can open. */
public final class InvalidRemoteException extends StoreException {
    public InvalidRemoteException(String remote, String why) {
        super("Invalid remote '" + remote + "': " + why,
                "Use s3://bucket[/prefix] (e.g. s3://ml-data/warp) or file:///absolute/dir"
                        + " (e.g. file:///srv/warp-store); pass it as --remote or WARP_REMOTE.",
                null);
    }

    private InvalidRemoteException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    /** An S3 endpoint that is not a URL: said as such, with the option that gives one (audit 23). */
    public static InvalidRemoteException endpoint(String endpoint) {
        return new InvalidRemoteException("Invalid S3 endpoint '" + endpoint + "': it is not a URL such as"
                + " http://127.0.0.1:9000", "Pass --endpoint (or WARP_S3_ENDPOINT) with its scheme and host, e.g."
                + " --endpoint http://" + (endpoint.contains("://") ? "127.0.0.1:9000" : endpoint.strip()), null);
    }

    @Override
    public String type() {
        return "InvalidRemote";
    }
}
