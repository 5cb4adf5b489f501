package io.warpdata.catalog;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.VersionHash;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * The pointer object (latest, a branch, a tag): {@code {"at": ..., "by": ..., "version": "<hex>"}}.
 * Only {@code version} is read back; the rest is the non-hashed envelope (who, when), and other
 * fields are ignored so that the format has room to grow.
 */
final class PointerCodec {
    private static final String VERSION = "version";
    private static final JsonFactory JSON = new JsonFactory();

    private PointerCodec() {
    }

    /**
     * Parses {@code {"version":"<hex>"}}; other fields are ignored (room to grow).
     *
     * @param source the object's name, for errors
     * @throws ManifestCorruptedException if it is not a JSON object naming a version
     */
    static VersionHash fromJson(byte[] json, String source) {
        String version = null;
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new ManifestCorruptedException(source, "$", "a latest pointer must be a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (VERSION.equals(field) && value == JsonToken.VALUE_STRING) {
                    version = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new ManifestCorruptedException(source, "$", "not valid JSON: " + e.getMessage(), e);
        }
        if (version == null) {
            throw new ManifestCorruptedException(source, VERSION, "missing");
        }
        try {
            return new VersionHash(version);
        } catch (ManifestValidationException e) {
            throw new ManifestCorruptedException(source, VERSION, e.getMessage(), e);
        }
    }

    /** The pointer object naming {@code version}, written {@code at} by {@code by} (or no one). */
    static byte[] toJson(VersionHash version, String by, Instant at) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(160);
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("at", at.toString());
            if (by != null) {
                g.writeStringField("by", by);
            }
            g.writeStringField(VERSION, version.hex());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory cannot fail", e);
        }
        return out.toByteArray();
    }
}
