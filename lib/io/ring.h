/*
 * ring.h - a bounded hand-over of consecutive byte runs from one producer
 * thread to one consumer: the producer copies what arrives into fixed-size
 * slots and waits while every slot is full; the consumer takes full slots in
 * order by trading its own buffer for the slot's (no second copy). The remote
 * reader streams tensor data through one (io/http.c).
 */
#ifndef GK_IO_RING_H
#define GK_IO_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gk_ring gk_ring;

/** gk_ring_new() : a ring of n_slots slots of slot_bytes bytes each (buffers
 *  are allocated as the producer first fills them). @return : NULL when out of
 *  memory. */
gk_ring *gk_ring_new(size_t n_slots, size_t slot_bytes);

/** gk_ring_free() : frees r and every buffer it holds (NULL: nothing). No
 *  producer may be running. */
void gk_ring_free(gk_ring *r);

/** gk_ring_reset() : empties r for a new stream whose first byte is at offset
 *  start (of the file the bytes come from). No producer may be running. */
void gk_ring_reset(gk_ring *r, uint64_t start);

/** gk_ring_put() : (producer) appends n bytes, publishing each slot as it
 *  fills; waits while every slot is full. @return : false when the consumer
 *  stopped the stream (gk_ring_stop) or a buffer could not be allocated (the
 *  stream then ends as failed). */
bool gk_ring_put(gk_ring *r, const uint8_t *data, size_t n);

/** gk_ring_finish() : (producer) ends the stream: publishes a partly filled
 *  slot when ok, else marks the stream failed after the slots already full. */
void gk_ring_finish(gk_ring *r, bool ok);

/** gk_ring_stopping() : (producer) whether the consumer stopped the stream. */
bool gk_ring_stopping(gk_ring *r);

/** gk_ring_take() : (consumer) waits for the next full slot and trades buffers
 *  with it: *buf (capacity *cap bytes; may be NULL) goes to the ring, and gets
 *  the slot's, holding *len bytes from file offset *off. @return : false when
 *  the stream ended (finished, failed or stopped) before another slot. */
bool gk_ring_take(gk_ring *r, uint8_t **buf, size_t *cap, uint64_t *off, size_t *len);

/** gk_ring_stop() : (consumer) tells the producer to give up: a waiting or
 *  later gk_ring_put returns false. */
void gk_ring_stop(gk_ring *r);

#endif
