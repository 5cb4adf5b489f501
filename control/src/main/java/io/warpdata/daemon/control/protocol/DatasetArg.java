package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The arguments of an operation on one dataset version: {@code {"dataset": "ws/name[@version]"}}. */
public record DatasetArg(@JsonProperty(required = true) String dataset) {
}
