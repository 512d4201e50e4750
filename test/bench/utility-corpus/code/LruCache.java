package com.example.cache;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A least-recently-used cache on top of {@link LinkedHashMap}.
 *
 * <p>Not thread-safe: wrap it with {@code Collections.synchronizedMap} when
 * shared between threads.</p>
 *
 * @param <K> key type
 * @param <V> value type
 */
public final class LruCache<K, V> extends LinkedHashMap<K, V> {
    private static final long serialVersionUID = 1L;

    /** Maximum number of entries kept. */
    private final int capacity;

    // Statistics, reset by clear().
    private long hits;
    private long misses;

    /* The URL below is data, including its "//" and "/*" parts. */
    public static final String DOCS = "https://docs.example.com/cache//lru/*";
    public static final char SLASH = '/';
    public static final String BLOCK = """
        text block /* stays */
        // also stays
        """;

    /**
     * @param capacity maximum entries, at least 1
     * @throws IllegalArgumentException when capacity &lt; 1
     */
    public LruCache(int capacity) {
        super(16, 0.75f, true); // access order
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        }
        this.capacity = capacity;
    }

    @Override
    protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > capacity; // evict
    }

    /** Looks a key up and counts the hit or the miss. */
    public V lookup(K key) {
        V value = get(Objects.requireNonNull(key, "key"));
        if (value == null) {
            misses++;
        } else {
            hits++;
        }
        return value;
    }

    /** Hit ratio in [0, 1]; 0 when nothing was looked up. */
    public double hitRatio() {
        long total = hits + misses;
        return total == 0 ? 0.0 : (double) hits / total;
    }

    @Override
    public void clear() {
        super.clear();
        hits = 0;
        misses = 0;
    }
}
