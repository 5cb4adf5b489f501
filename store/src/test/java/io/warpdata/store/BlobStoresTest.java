package io.warpdata.store;

import io.warpdata.store.local.LocalBlobStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlobStoresTest {
    @TempDir
    Path tmp;

    @Test
    void fileUriOpensALocalStoreAtThatDirectory() {
        try (BlobStore store = BlobStores.open(tmp.toUri().toString(), Optional.empty())) {
            assertThat(store).isInstanceOf(LocalBlobStore.class);
            assertThat(((LocalBlobStore) store).root()).isEqualTo(tmp.toAbsolutePath().normalize());
        }
    }

    @Test
    void s3UriOpensAnS3StoreNamedByBucketAndPrefix() {
        try (BlobStore store = BlobStores.open("s3://my-bucket/some/prefix/", Optional.of("http://127.0.0.1:1"))) {
            assertThat(store.describe()).isEqualTo("s3://my-bucket/some/prefix");
        }
    }

    @Test
    void unknownSchemeIsAnInvalidRemoteWithAnExample() {
        assertThatThrownBy(() -> BlobStores.open("gs://bucket/x", Optional.empty()))
                .isInstanceOf(InvalidRemoteException.class)
                .hasMessageContaining("gs")
                .satisfies(e -> assertThat(((InvalidRemoteException) e).nextStep()).contains("s3://", "file:///"));
    }

    @Test
    void anS3UriWithOneSlashIsShownInTheRightForm() {
        for (String typo : java.util.List.of("s3:/warp-demo", "s3:warp-demo", "S3://warp-demo")) {
            assertThatThrownBy(() -> BlobStores.open(typo, Optional.empty())).as(typo)
                    .isInstanceOf(InvalidRemoteException.class)
                    .hasMessageContaining("s3://BUCKET[/PREFIX], with two slashes")
                    .hasMessageContaining(": s3://warp-demo")
                    .hasMessageNotContaining("unsupported scheme");
        }
    }

    @Test
    void bareAbsolutePathIsRejectedSuggestingTheFileUri() {
        assertThatThrownBy(() -> BlobStores.open("/srv/store", Optional.empty()))
                .isInstanceOf(InvalidRemoteException.class)
                .hasMessageContaining("file:///srv/store");
    }

    @Test
    void aTildeInAFileUriIsNamedAsNotExpanded() {
        String home = System.getProperty("user.home");
        for (String remote : new String[] {"file://~/fstore", "file:///~/fstore"}) {
            assertThatThrownBy(() -> BlobStores.open(remote, Optional.empty()))
                    .isInstanceOf(InvalidRemoteException.class)
                    .hasMessageContaining("~ is not expanded in a URI")
                    .hasMessageContaining("file://" + home + "/fstore")
                    .hasMessageNotContaining("three slashes");
        }
    }

    @Test
    void badBucketNameIsInvalidRemote() {
        assertThatThrownBy(() -> BlobStores.open("s3://Bad_Bucket/x", Optional.empty()))
                .isInstanceOf(InvalidRemoteException.class);
    }
}
