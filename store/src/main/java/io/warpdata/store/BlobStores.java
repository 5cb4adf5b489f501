package io.warpdata.store;

import io.warpdata.store.local.LocalBlobStore;
import io.warpdata.store.s3.S3BlobStore;

import java.util.Optional;

/** Opens the {@link BlobStore} a remote URI names. */
public final class BlobStores {
    /** The environment variable naming a non-AWS S3 endpoint when none is passed explicitly. */
    public static final String ENDPOINT_ENV = "WARP_S3_ENDPOINT";

    private BlobStores() {
    }

    /**
     * Opens {@code file:///abs/dir} as a local store or {@code s3://bucket[/prefix]} as an S3
     * store. For S3, {@code endpoint} (else {@code WARP_S3_ENDPOINT}) selects a non-AWS server.
     *
     * @throws InvalidRemoteException for any other form, with an example of a valid one
     */
    public static BlobStore open(String remoteUri, Optional<String> endpoint) {
        if (remoteUri == null || remoteUri.isBlank()) {
            throw new InvalidRemoteException(String.valueOf(remoteUri), "no remote given");
        }
        String remote = remoteUri.trim();
        if (remote.startsWith("s3://")) {
            Optional<String> ep = endpoint.filter(e -> !e.isBlank())
                    .or(() -> Optional.ofNullable(System.getenv(ENDPOINT_ENV)).filter(e -> !e.isBlank()));
            return S3BlobStore.open(remote, ep);
        }
        if (remote.startsWith("file:")) {
            return LocalBlobStore.open(remote);
        }
        if (remote.startsWith("/")) {
            throw new InvalidRemoteException(remote, "a local directory must be written as a URI: file://" + remote);
        }
        int colon = remote.indexOf(':');
        String scheme = colon > 0 ? remote.substring(0, colon) : "";
        if (scheme.equalsIgnoreCase("s3")) {
            // s3:/bucket, s3:bucket, S3://bucket: the scheme is right, the form is not.
            String rest = remote.substring(colon + 1).replaceFirst("^/+", "");
            throw new InvalidRemoteException(remote, "an S3 store is written s3://BUCKET[/PREFIX], with two slashes"
                    + " and a lowercase scheme" + (rest.isEmpty() ? "" : ": s3://" + rest));
        }
        throw new InvalidRemoteException(remote, colon > 0
                ? "unsupported scheme '" + scheme + "' (supported: s3://, file://)"
                : "no scheme (supported: s3://, file://)");
    }

    /**
     * Refuses a store that cannot hold anything yet where it is only read: a {@code file://}
     * directory that does not exist ({@link LocalBlobStore#requireRoot}). An S3 bucket that does
     * not exist says so itself, on the first request.
     *
     * @return {@code store}
     */
    public static BlobStore requireExisting(BlobStore store) {
        if (store instanceof LocalBlobStore local) {
            local.requireRoot();
        }
        return store;
    }
}
