package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/** {@code refresh {dataset?}}: re-read pointers and listings now instead of after their TTL. */
public final class RefreshCall {
    private RefreshCall() {
    }

    /** @param dataset the dataset the caller cares about (all are re-read); checked to exist */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Request(String dataset) {
        public static final Request ALL = new Request(null);
    }

    /** @param refreshed the dataset, or {@code all} */
    public record Reply(String refreshed) {
    }
}
