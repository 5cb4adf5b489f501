package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.ByteSize;

/**
 * A size argument: a whole number of bytes, or a string such as {@code "200GB"} (what a user
 * types after {@code --limit}); always sent as the number.
 */
public record ByteCount(long bytes) {
    public ByteCount {
        if (bytes < 0) {
            throw new IllegalArgumentException("must be a byte count from 0, got " + bytes);
        }
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static ByteCount read(JsonNode v) {
        if (v.isIntegralNumber() && v.canConvertToLong() && v.longValue() >= 0) {
            return new ByteCount(v.longValue());
        }
        if (v.isTextual()) {
            return new ByteCount(ByteSize.parse(v.asText()));
        }
        throw new IllegalArgumentException("must be a byte count or a size such as 200GB");
    }

    @JsonValue
    public long bytes() {
        return bytes;
    }
}
