package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Locale;

/**
 * {@code prefetch.order {plan?, root?, paths, part?, more?}}: the files an epoch will read, in
 * order, sent in parts of bounded size; the cache fetches ahead in that order.
 */
public final class PrefetchOrderCall {
    private PrefetchOrderCall() {
    }

    /**
     * @param plan  the plan's name ({@code default} when absent); a new part 0 replaces it
     * @param root  the directory the paths are relative to (absolute under the mount, or mount-relative)
     * @param paths files relative to root, in the order they will be read
     * @param part  this part's number, from 0
     * @param more  whether more parts follow
     * @param fetch what warpd fetches for the plan ({@link Fetch#AUTO} when absent; docs/cache.md,
     *              "Order plans"); read from part 0
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Request(String plan, String root, @JsonProperty(required = true) List<String> paths, Integer part,
                          boolean more, Fetch fetch) {
        /** A request that leaves what to fetch to warpd. */
        public Request(String plan, String root, List<String> paths, Integer part, boolean more) {
            this(plan, root, paths, part, more, null);
        }
    }

    /**
     * What a plan fetches: {@code auto} (its blocks, or each file on its own when the blocks are
     * more than the cache keeps or mostly bytes nobody reads), {@code blocks} (not for the
     * latter: fewer, larger GETs) or {@code files} (each file on its own: the fewest bytes). On
     * the wire in lower case; any other word is refused with the three.
     */
    public enum Fetch {
        AUTO, BLOCKS, FILES;

        /** The word {@code text} names ({@code warpctl prefetch --fetch}). */
        public static Fetch of(String text) {
            for (Fetch f : values()) {
                if (f.wire().equals(text)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("is '" + text + "'; it is auto, blocks or files");
        }

        /** As read from a request: a string, one of the three words (a number is not one). */
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Fetch read(JsonNode v) {
            if (!v.isTextual()) {
                throw new IllegalArgumentException("must be a string: auto, blocks or files");
            }
            return of(v.asText());
        }

        /** The word on the wire. */
        @JsonValue
        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One of three answers: a part taken ({@code part}, {@code members} so far), a plan
     * stopped (no paths at all: {@code stopped}), or a plan started (the rest). Fields of the
     * other answers are absent.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Reply(@JsonProperty(required = true) String plan, Integer part, Long members, Boolean stopped,
                        String root, Long blobs, Long plannedBytes, Long grains, Long aheadBytes, Long heldBytes,
                        Boolean replaced, String fetches) {
        public static Reply partTaken(String plan, int part, long members) {
            return new Reply(plan, part, members, null, null, null, null, null, null, null, null, null);
        }

        public static Reply stopped(String plan, boolean stopped) {
            return new Reply(plan, null, null, stopped, null, null, null, null, null, null, null, null);
        }

        /**
         * @param fetches {@code blocks}, or {@code files} for a plan over more than the cache keeps,
         *                or whose files are a small part of their blocks, or that asked for files
         *                ({@code grains} then counts files)
         */
        public static Reply started(String plan, String root, long members, long blobs, long plannedBytes, long grains,
                                    long aheadBytes, long heldBytes, boolean replaced, String fetches) {
            return new Reply(plan, null, members, null, root, blobs, plannedBytes, grains, aheadBytes, heldBytes, replaced,
                    fetches);
        }
    }
}
