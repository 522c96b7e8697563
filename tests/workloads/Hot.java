// A JIT-compiled hot loop for the JVM perf map test: hotLoop() runs for
// SECONDS, its result printed so that the JIT cannot drop it.
public class Hot {
    static long hotLoop(long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x = x * 31 + i;
        return x;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long sum = 0;
        while (System.nanoTime() < end)
            sum += hotLoop(1_000_000);
        System.out.println(sum);
    }
}
