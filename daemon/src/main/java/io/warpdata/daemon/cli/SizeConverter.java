package io.warpdata.daemon.cli;

import io.warpdata.daemon.ByteSize;
import picocli.CommandLine;

/**
 * Reads a SIZE option ({@code 500MB}, {@code 200GB}, {@code 1TiB}, a number of bytes; see
 * {@link ByteSize}) while the command line is parsed, so that a value that is not a size is a
 * usage error (exit 2, JSON under {@code --json}) naming the option, like any other bad argument.
 */
final class SizeConverter implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            return ByteSize.parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
