/* Graph and distributed-graph topologies: Graph_create/get/map, Graphdims_get,
 * Graph_neighbors(_count), Dist_graph_create(_adjacent), Dist_graph_neighbors(_count),
 * Topo_test, and the neighbourhood collectives over them. */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static int cmp_int(const void* a, const void* b) {
  return *(const int*)a - *(const int*)b;
}

/* A ring as a graph: node i's neighbours are i-1 and i+1 (the same node when size <= 2). */
static void graph_ring(void) {
  int* index = malloc(sizeof(int) * size);
  int* edges = malloc(sizeof(int) * 2 * size);
  for (int i = 0; i < size; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i - 1 + size) % size;
    edges[2 * i + 1] = (i + 1) % size;
  }
  int newrank = -5;
  MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank);
  CHECK(newrank == rank, "Graph_map %d", newrank);
  MPI_Comm g;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
  int kind = -1, nnodes = -1, nedges = -1, n = -1;
  MPI_Topo_test(g, &kind);
  CHECK(kind == MPI_GRAPH, "Topo_test %d", kind);
  MPI_Graphdims_get(g, &nnodes, &nedges);
  CHECK(nnodes == size && nedges == 2 * size, "Graphdims_get %d %d", nnodes, nedges);
  int* gi = malloc(sizeof(int) * size);
  int* ge = malloc(sizeof(int) * 2 * size);
  MPI_Graph_get(g, size, 2 * size, gi, ge);
  CHECK(
      memcmp(gi, index, sizeof(int) * size) == 0 && memcmp(ge, edges, sizeof(int) * 2 * size) == 0,
      "Graph_get differs");
  for (int q = 0; q < size; ++q) {
    MPI_Graph_neighbors_count(g, q, &n);
    CHECK(n == 2, "Graph_neighbors_count(%d) %d", q, n);
    int nb[2] = {-1, -1};
    MPI_Graph_neighbors(g, q, 2, nb);
    CHECK(nb[0] == (q - 1 + size) % size && nb[1] == (q + 1) % size, "Graph_neighbors(%d) %d %d", q,
          nb[0], nb[1]);
  }
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  int got[2] = {-1, -1};
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g);
  CHECK(got[0] == left && got[1] == right, "graph allgather %d %d", got[0], got[1]);
  if (size >= 3) { /* distinct neighbours: which block pairs with which is defined */
    int out[2] = {10 * rank, 10 * rank + 1}, in[2] = {-1, -1};
    MPI_Request req;
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, g, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* left sent me its block 1 (towards its right), right its block 0 */
    CHECK(in[0] == 10 * left + 1 && in[1] == 10 * right, "graph alltoall %d %d", in[0], in[1]);
  }
  MPI_Comm_free(&g);

  /* a graph over fewer nodes: the others get MPI_COMM_NULL */
  if (size > 1) {
    int idx1[1] = {0};
    MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, edges, 0, &g);
    CHECK((rank == 0) == (g != MPI_COMM_NULL), "1-node graph on rank %d", rank);
    if (g != MPI_COMM_NULL) {
      MPI_Graph_neighbors_count(g, 0, &n);
      CHECK(n == 0, "1-node graph neighbours %d", n);
      MPI_Comm_free(&g);
    }
  }
  free(index);
  free(edges);
  free(gi);
  free(ge);
}

/* Directed ring i -> i+1 given adjacently, with weights. */
static void dist_adjacent(void) {
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  int sw = 100 + left, dw = 100 + rank;
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &sw, 1, &right, &dw, MPI_INFO_NULL, 0,
                                 &g);
  int kind = -1, indeg = -1, outdeg = -1, weighted = -1;
  MPI_Topo_test(g, &kind);
  CHECK(kind == MPI_DIST_GRAPH, "Topo_test %d", kind);
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  CHECK(indeg == 1 && outdeg == 1 && weighted, "neighbors_count %d %d %d", indeg, outdeg, weighted);
  int s = -1, d = -1, gsw = -1, gdw = -1;
  MPI_Dist_graph_neighbors(g, 1, &s, &gsw, 1, &d, &gdw);
  CHECK(s == left && d == right && gsw == 100 + left && gdw == 100 + rank,
        "neighbors %d(%d) %d(%d)", s, gsw, d, gdw);
  int got = -1;
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, g);
  CHECK(got == left, "dist allgather %d, expected %d", got, left);
  /* alltoallv: send 3 ints, receive them at displacement 2 */
  int sv[3] = {rank, rank * 2, rank * 3}, rv[5] = {-1, -1, -1, -1, -1};
  int sc = 3, sd = 0, rc = 3, rd = 2;
  MPI_Request req;
  MPI_Ineighbor_alltoallv(sv, &sc, &sd, MPI_INT, rv, &rc, &rd, MPI_INT, g, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(rv[0] == -1 && rv[1] == -1 && rv[2] == left && rv[3] == 2 * left && rv[4] == 3 * left,
        "dist alltoallv %d %d %d %d %d", rv[0], rv[1], rv[2], rv[3], rv[4]);
  MPI_Comm_free(&g);

  /* unweighted, and a process with no edges at all */
  const int n_in = rank == 0 ? 0 : 1, n_out = rank == size - 1 ? 0 : 1;
  int lo = rank - 1, hi = rank + 1;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n_in, &lo, MPI_UNWEIGHTED, n_out, &hi,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  CHECK(indeg == n_in && outdeg == n_out && !weighted, "chain neighbors_count %d %d %d", indeg,
        outdeg, weighted);
  got = -9;
  int mine = 7 * rank;
  MPI_Neighbor_alltoall(&mine, 1, MPI_INT, &got, 1, MPI_INT, g);
  CHECK(got == (rank == 0 ? -9 : 7 * (rank - 1)), "chain alltoall %d", got);
  MPI_Comm_free(&g);
}

/* Rank 0 describes every edge i -> i+1 and i -> i+2 (weight 10*i + k); the others none. */
static void dist_general(void) {
  int n = rank == 0 ? size : 0;
  int* sources = malloc(sizeof(int) * size);
  int* degrees = malloc(sizeof(int) * size);
  int* dests = malloc(sizeof(int) * 2 * size);
  int* weights = malloc(sizeof(int) * 2 * size);
  for (int i = 0; i < size; ++i) {
    sources[i] = i;
    degrees[i] = 2;
    dests[2 * i] = (i + 1) % size;
    dests[2 * i + 1] = (i + 2) % size;
    weights[2 * i] = 10 * i + 1;
    weights[2 * i + 1] = 10 * i + 2;
  }
  MPI_Comm g;
  MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights, MPI_INFO_NULL, 0, &g);
  int indeg = -1, outdeg = -1, weighted = -1;
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  CHECK(indeg == 2 && outdeg == 2 && weighted, "general neighbors_count %d %d %d", indeg, outdeg,
        weighted);
  int src[2], srcw[2], dst[2], dstw[2];
  MPI_Dist_graph_neighbors(g, 2, src, srcw, 2, dst, dstw);
  /* the order is the implementation's: compare as sorted lists, weights with their edge */
  for (int k = 0; k < 2; ++k) {
    const int from = src[k];
    CHECK(srcw[k] == 10 * from + 1 || srcw[k] == 10 * from + 2, "in-edge from %d weight %d", from,
          srcw[k]);
    CHECK(dstw[k] == 10 * rank + 1 || dstw[k] == 10 * rank + 2, "out-edge weight %d", dstw[k]);
  }
  int es[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
  int ed[2] = {(rank + 1) % size, (rank + 2) % size};
  int ss[2] = {src[0], src[1]}, sd[2] = {dst[0], dst[1]};
  qsort(es, 2, sizeof(int), cmp_int);
  qsort(ed, 2, sizeof(int), cmp_int);
  qsort(ss, 2, sizeof(int), cmp_int);
  qsort(sd, 2, sizeof(int), cmp_int);
  CHECK(ss[0] == es[0] && ss[1] == es[1], "sources %d %d, expected %d %d", ss[0], ss[1], es[0],
        es[1]);
  CHECK(sd[0] == ed[0] && sd[1] == ed[1], "destinations %d %d, expected %d %d", sd[0], sd[1], ed[0],
        ed[1]);
  /* allgather blocks follow the order Dist_graph_neighbors reported */
  int got[2] = {-1, -1};
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g);
  CHECK(got[0] == src[0] && got[1] == src[1], "general allgather %d %d, sources %d %d", got[0],
        got[1], src[0], src[1]);
  MPI_Comm_free(&g);

  /* unweighted: MPI_UNWEIGHTED everywhere */
  MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL,
                        0, &g);
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  CHECK(indeg == 2 && outdeg == 2 && !weighted, "unweighted neighbors_count %d %d %d", indeg,
        outdeg, weighted);
  MPI_Comm_free(&g);
  free(sources);
  free(degrees);
  free(dests);
  free(weights);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  graph_ring();
  dist_adjacent();
  dist_general();
  MPI_Finalize();
  return check_exit("topo_graph");
}
