package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonProperty;

/** {@code metrics}: every metric in the Prometheus text format, as {@code /metrics} serves it. */
public final class MetricsCall {
    private MetricsCall() {
    }

    public record Reply(@JsonProperty(required = true) String text) {
    }
}
