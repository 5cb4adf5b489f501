package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The JSON manifest a format's writer leaves next to its data (a safetensors dataset's
 * {@code dataset_manifest.json}, a tensor warehouse's {@code manifest.json}), read field by field
 * for publish's checks: a missing or mistyped field is the seeds' {@code ManifestCorrupted},
 * naming where and what, with the format's own fix.
 */
final class WriterManifest {
    private final String fix;

    /** @param fix what to do about a broken manifest of this format (its fields, its writer) */
    WriterManifest(String fix) {
        this.fix = fix;
    }

    /** {@code ManifestCorrupted}: {@code where} (file and field) and what is wrong. */
    InvalidInputException corrupted(String where, String problem) {
        return new InvalidInputException(where + " " + problem + " (ManifestCorrupted)", fix);
    }

    /** A required string field. */
    String text(JsonNode n, String field, String where) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw corrupted(where, v == null ? "lacks '" + field + "'" : "has '" + field + "' that is not a string");
        }
        return v.asText();
    }

    /** A required non-negative integer that fits a long. */
    long count(JsonNode n, String field, String where) {
        JsonNode v = n.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw corrupted(where, v == null ? "lacks '" + field + "'" : "has '" + field + "' that is not a count");
        }
        return v.asLong();
    }

    /** A required object field. */
    JsonNode object(JsonNode n, String field, String where) {
        JsonNode v = n.get(field);
        if (v == null || !v.isObject()) {
            throw corrupted(where, v == null ? "lacks '" + field + "'" : "has '" + field + "' that is not an object");
        }
        return v;
    }

    /** Where entry {@code i} of a manifest's {@code shards} array is, for messages; checks that it is an object. */
    String shardAt(JsonNode shards, int i, String where) {
        String at = where + " shards[" + i + "]";
        if (!shards.get(i).isObject()) {
            throw corrupted(at, "is not an object");
        }
        return at;
    }

    /** A file's size, or a typed error saying it cannot be read. */
    /**
     * The JSON reader of writers' manifests: a key given twice is refused, not read last-wins
     * ({@code "row_count": 25, ..., "row_count": 10} was taken as 10, and the error blamed the parts).
     */
    static final com.fasterxml.jackson.databind.ObjectMapper JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    /** What is wrong with a manifest Jackson could not read: a key given twice, or not JSON. */
    static String unreadable(java.io.IOException e) {
        String first;
        if (e instanceof com.fasterxml.jackson.core.JsonProcessingException j) {
            // Jackson's own message without its location text ("Source: REDACTED ..."): line and column instead
            var at = j.getLocation();
            first = String.valueOf(j.getOriginalMessage()).lines().findFirst().orElse("")
                    + (at == null || at.getLineNr() < 1 ? "" : ", at line " + at.getLineNr() + " column " + at.getColumnNr());
        } else {
            first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        }
        java.util.regex.Matcher dup = java.util.regex.Pattern.compile("Duplicate field '(.*)'").matcher(first);
        if (dup.find()) {
            return "has the key '" + dup.group(1) + "' more than once (keep the one that is meant)";
        }
        return "is not JSON (" + first + ")";
    }

    static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + p + ": " + e.getMessage(), "Make it readable.", e);
        }
    }
}
