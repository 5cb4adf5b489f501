package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A tensor warehouse's {@code thresholds} judged against its {@code summary} (seed 003). The seed
 * names the summary's counts ({@code total, non_empty, empty, missing, invalid}) but not how a
 * threshold is spelled: that is the ETL's choice. So:
 *
 * <ul>
 *   <li>{@code max_X} / {@code min_X} bound the summary's number {@code X} when it has one (a
 *       count, or a fraction the ETL computed itself, e.g. {@code invalid_fraction});
 *   <li>otherwise {@code X} ending in {@code _ratio}, {@code _fraction}, {@code _frac} or
 *       {@code _rate} bounds count / {@code total} of the count before the suffix, and
 *       {@code _pct} or {@code _percent} the same as a percentage;
 *   <li>a threshold none of this explains (no such count, no {@code total}, a value that is not
 *       a number) is not grounds for refusing the file: it is reported as not checked.
 * </ul>
 *
 * Only what is provably violated is a violation. Counts are read from {@code summary.totals} when
 * it is an object, else from {@code summary}. A null threshold is unset; fields that are neither
 * {@code max_} nor {@code min_} are not thresholds and are ignored.
 */
final class Thresholds {
    private static final List<String> FRACTION = List.of("_ratio", "_fraction", "_frac", "_rate");
    private static final List<String> PERCENT = List.of("_percent", "_pct");

    private Thresholds() {
    }

    /**
     * What judging found.
     *
     * @param violations thresholds the summary provably violates, each said in words
     * @param unchecked  thresholds that could not be checked, each with the reason
     *                   ({@code threshold max_foo not checked: no count foo in summary})
     */
    record Judgement(List<String> violations, List<String> unchecked) {
        Judgement {
            violations = List.copyOf(violations);
            unchecked = List.copyOf(unchecked);
        }
    }

    static Judgement judge(JsonNode summary, JsonNode thresholds) {
        boolean totals = summary.path("totals").isObject();
        JsonNode counts = totals ? summary.get("totals") : summary;
        String countsAt = totals ? "summary.totals" : "summary";
        List<String> violations = new ArrayList<>();
        List<String> unchecked = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = thresholds.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> t = it.next();
            String key = t.getKey();
            JsonNode limit = t.getValue();
            boolean max = key.startsWith("max_");
            if ((!max && !key.startsWith("min_")) || limit.isNull()) {
                continue;
            }
            if (!limit.isNumber() || !Double.isFinite(limit.asDouble()) || limit.asDouble() < 0) {
                unchecked.add("threshold " + key + " not checked: its value " + limit + " is not a number of 0 or more");
                continue;
            }
            Measure m = measure(key.substring(4), counts, countsAt);
            if (m.problem != null) {
                unchecked.add("threshold " + key + " not checked: " + m.problem);
                continue;
            }
            double bound = limit.asDouble();
            if (max ? m.value > bound : m.value < bound) {
                violations.add(m.said + (max ? " > " : " < ") + key + " " + limit.asText());
            }
        }
        return new Judgement(violations, unchecked);
    }

    /** The number a threshold bounds and how to say it, or why there is none. */
    private record Measure(double value, String said, String problem) {
        static Measure of(double value, String said) {
            return new Measure(value, said, null);
        }

        static Measure none(String problem) {
            return new Measure(0, null, problem);
        }
    }

    private static Measure measure(String stem, JsonNode counts, String countsAt) {
        JsonNode direct = counts.get(stem);
        if (direct != null && direct.isNumber()) {
            return Measure.of(direct.asDouble(), stem + " " + direct.asText());
        }
        for (String suffix : FRACTION) {
            if (stem.endsWith(suffix) && stem.length() > suffix.length()) {
                return share(stem.substring(0, stem.length() - suffix.length()), counts, countsAt, false);
            }
        }
        for (String suffix : PERCENT) {
            if (stem.endsWith(suffix) && stem.length() > suffix.length()) {
                return share(stem.substring(0, stem.length() - suffix.length()), counts, countsAt, true);
            }
        }
        return Measure.none(missing(stem, direct, countsAt));
    }

    private static Measure share(String name, JsonNode counts, String countsAt, boolean percent) {
        JsonNode count = counts.get(name);
        JsonNode total = counts.get("total");
        if (!isCount(count)) {
            return Measure.none(missing(name, count, countsAt));
        }
        if (!isCount(total)) {
            return Measure.none(missing("total", total, countsAt));
        }
        long c = count.asLong();
        long n = total.asLong();
        double fraction = n == 0 ? 0 : (double) c / n;
        return percent
                ? Measure.of(fraction * 100, name + " " + c + " of " + n + " (" + String.format(Locale.ROOT, "%.4g", fraction * 100) + "%)")
                : Measure.of(fraction, name + " " + c + " of " + n + " (" + String.format(Locale.ROOT, "%.4g", fraction) + ")");
    }

    private static boolean isCount(JsonNode v) {
        return v != null && v.isIntegralNumber() && v.canConvertToLong() && v.asLong() >= 0;
    }

    private static String missing(String name, JsonNode v, String countsAt) {
        return v == null ? "no count " + name + " in " + countsAt : countsAt + "." + name + " is " + v + ", not a count";
    }
}
