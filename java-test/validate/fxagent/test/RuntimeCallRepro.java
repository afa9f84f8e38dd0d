/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

/**
 * Reproducer of docs/VALIDATION.md section 4.2: AsyncGetCallTrace misplaces the top compiled
 * frame of a thread stopped at a safepoint poll. The main thread walks a long linked list in a
 * method that C2 inlines into its caller; the walk's loop has a safepoint poll at its back
 * edge, which is where a suspended thread stops. Run under validate mode, the report lists
 * mismatches where GetStackTrace shows walk() at its back edge and ASGCT shows the caller at
 * another call site, the next point of the compiled code that has debug information.
 *
 * <p>usage: {@code RuntimeCallRepro SECONDS}
 */
public final class RuntimeCallRepro {
    private RuntimeCallRepro() {}

    static final class Node {
        Node next;
        int value;
    }

    static Node build(int n) {
        Node head = null;
        for (int i = 0; i < n; i++) {
            Node node = new Node();
            node.value = i;
            node.next = head;
            head = node;
        }
        return head;
    }

    /* Not a counted loop: C2 keeps a safepoint poll at its back edge. */
    static int walk(Node n) {
        int sum = 0;
        while (n != null) {
            sum += n.value;
            n = n.next;
        }
        return sum;
    }

    static long loop(Node list, long deadline) {
        long sum = 0;
        while (System.nanoTime() < deadline) {
            sum += walk(list);
            sum += Long.toString(sum).length();
        }
        return sum;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        long sum = loop(build(1 << 20), System.nanoTime() + (long) (seconds * 1e9));
        System.out.println("RuntimeCallRepro: checksum " + sum);
    }
}
