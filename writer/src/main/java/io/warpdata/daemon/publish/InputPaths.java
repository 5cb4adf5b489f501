package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * Expands a path or glob given on the command line ({@code ./data/*.parquet}), so that users can
 * quote globs and get the same result on every shell. Results are sorted by path.
 */
public final class InputPaths {
    private InputPaths() {
    }

    /**
     * @param spec a path or a glob ({@code *}, {@code ?}, {@code [..]}, {@code {a,b}}, {@code **})
     * @param cwd where relative specs start
     * @param what for errors, e.g. {@code "--table main"}
     * @return the matching paths, sorted; never empty
     * @throws InvalidInputException if nothing exists or matches
     */
    public static List<Path> expand(String spec, Path cwd, String what) {
        int glob = firstGlobChar(spec);
        if (glob < 0) {
            Path p = cwd.resolve(spec).normalize();
            if (!Files.exists(p) && Files.isSymbolicLink(p)) {
                throw brokenLink(spec, p, what);
            }
            if (!Files.exists(p)) {
                throw new InvalidInputException("Input " + spec + " of " + what + " does not exist",
                        spec.startsWith("~") ? "A ~ inside quotes is not expanded by the shell: write ~/ outside the"
                                + " quotes, or $HOME/ (relative paths start at " + cwd + ")."
                                : "Check the path" + (spec.startsWith("/") ? "." : " (relative paths start at " + cwd + ")."));
            }
            return List.of(folderWhereItLeads(spec, p, what));
        }
        int slash = spec.lastIndexOf('/', glob);
        Path given = cwd.resolve(slash < 0 ? "." : spec.substring(0, slash + 1)).normalize();
        // 'latest/*.parquet': one output, whatever the link does next.
        Path base = Files.isDirectory(given) ? folderWhereItLeads(spec, given, what) : given;
        String pattern = spec.substring(slash + 1);
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
        int depth = pattern.contains("**") ? Integer.MAX_VALUE : pattern.split("/").length;
        List<Path> out = new ArrayList<>();
        int hidden = 0;
        if (Files.isDirectory(base)) {
            List<Path> matched = new ArrayList<>();
            try {
                // A visitor, not Files.walk: a file that vanishes beside the matches (a writer's
                // temp file) failed the walk with NoSuchFileException (audit 46).
                Files.walkFileTree(base, java.util.EnumSet.noneOf(java.nio.file.FileVisitOption.class), depth,
                        new java.nio.file.SimpleFileVisitor<>() {
                            @Override
                            public java.nio.file.FileVisitResult preVisitDirectory(Path d, java.nio.file.attribute.BasicFileAttributes a) {
                                if (!d.equals(base) && matcher.matches(base.relativize(d))) {
                                    matched.add(d);
                                }
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }

                            @Override
                            public java.nio.file.FileVisitResult visitFile(Path f, java.nio.file.attribute.BasicFileAttributes a) {
                                if (matcher.matches(base.relativize(f))) {
                                    matched.add(f);
                                }
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }

                            @Override
                            public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                                if (e instanceof java.nio.file.NoSuchFileException || hiddenUnasked(base.relativize(f), pattern)) {
                                    return java.nio.file.FileVisitResult.CONTINUE; // gone since it was listed, or a dot folder the glob leaves out
                                }
                                // A folder that cannot be opened may hold matches (the review: its
                                // files were left out, exit 0): whatever its name, refused.
                                throw e;
                            }
                        });
            } catch (IOException e) {
                throw new InvalidInputException("Cannot list " + base + " for " + spec + " of " + what + ": " + e.getMessage(),
                        "Make it readable, or narrow the glob so that it does not enter that folder.", e);
            }
            for (Path p : matched) {
                if (hiddenUnasked(base.relativize(p), pattern)) {
                    hidden++;
                } else {
                    out.add(p);
                }
            }
        }
        if (out.isEmpty()) {
            throw new InvalidInputException("Glob " + spec + " of " + what + " matches nothing"
                    + (hidden > 0 ? " but " + hidden + " name(s) starting with '.', which a glob leaves out as the shell"
                    + " does" : ""), hidden > 0 ? "Spell the dot in the pattern to take them (e.g. '.*.tar'), or name"
                    + " the files." : "Check the pattern" + (spec.startsWith("/") ? "." : " (relative paths start at " + cwd + ")."));
        }
        out.sort((a, b) -> ComponentOrder.INSTANCE.compare(a.toString(), b.toString()));
        return out.stream().map(p -> folderWhereItLeads(spec, p, what)).toList();
    }

    /**
     * A folder given as a symlink (a {@code latest} link to a dated output) as the folder it
     * leads to now, resolved once: every later read of the publish (the check, the table's parts,
     * the packing) then reads one output, even if the link moves meanwhile (audit 45: a link
     * repointed during a publish made a version of one output's index and the other's files, and
     * a table of 2,700 rows of one and 2,300 of the other). A file keeps the name it is given
     * (a tar's name is recorded), in the folder its parent leads to now ('latest/data.parquet').
     */
    private static Path folderWhereItLeads(String spec, Path p, String what) {
        try {
            if (Files.isDirectory(p)) {
                return p.toRealPath();
            }
            Path parent = p.getParent();
            return parent == null ? p : parent.toRealPath().resolve(p.getFileName());
        } catch (IOException e) {
            if (Files.isSymbolicLink(p)) {
                throw brokenLink(spec, p, what);
            }
            throw new InvalidInputException("Input " + spec + " of " + what + ": cannot read " + p + " (" + e.getMessage() + ")",
                    "Make it readable.", e);
        }
    }

    /**
     * Whether following {@code p}'s links comes back to one already passed: by the links
     * themselves, not by the error's text, which the system's locale translates (the review).
     */
    private static boolean loops(Path p) {
        java.util.Set<Path> seen = new java.util.HashSet<>();
        Path at = p.toAbsolutePath().normalize();
        while (Files.isSymbolicLink(at)) {
            if (!seen.add(at) || seen.size() > 40) {
                return true;
            }
            try {
                at = at.getParent().resolve(Files.readSymbolicLink(at)).normalize();
            } catch (IOException e) {
                return false;
            }
        }
        return false;
    }

    private static InvalidInputException brokenLink(String spec, Path p, String what) {
        String target;
        try {
            target = String.valueOf(Files.readSymbolicLink(p));
        } catch (IOException | UnsupportedOperationException e) {
            target = "?";
        }
        boolean loop = loops(p);
        return new InvalidInputException("Input " + spec + " of " + what + " is " + (loop
                ? "a symlink loop (it leads back to itself through " + target + ")"
                : "a broken symlink (to " + target + ", which does not exist)"),
                "Point the symlink at the folder or file to publish, or give that path itself.");
    }

    /**
     * As a shell globs: a name starting with '.' is matched only by a pattern component that
     * spells the dot ({@code .*.tar}, {@code x/.y}); {@code *.tar} took {@code .hidden.tar} too
     * (audit 32); and one dot anywhere in a pattern used to turn the rule off for all its
     * components, so a pattern whose second component was {@code .cache} took
     * {@code .git/.cache/.x.tar}. A pattern with {@code **}, whose components do not line up
     * with the path's, takes dot names if it spells a dot anywhere.
     */
    private static boolean hiddenUnasked(Path relative, String pattern) {
        String[] parts = pattern.split("/", -1);
        boolean aligned = !pattern.contains("**") && parts.length == relative.getNameCount();
        for (int i = 0; i < relative.getNameCount(); i++) {
            if (relative.getName(i).toString().startsWith(".") && !spellsDot(aligned ? parts[i] : pattern)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a glob (or one component of it) names a leading dot: {@code .x}, {@code a/.x}, {@code {.x,y}}. */
    private static boolean spellsDot(String glob) {
        return glob.startsWith(".") || glob.contains("/.") || glob.contains("{.") || glob.contains(",.");
    }

    private static int firstGlobChar(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == '{') {
                return i;
            }
        }
        return -1;
    }
}
