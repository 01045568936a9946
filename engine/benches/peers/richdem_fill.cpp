// Depression filling with richdem 0.3.4's priority floods (Richard Barnes' reference
// implementations): the peer of orogen's `priority_flood` (the core of the `lakes` node) in
// `cargo bench -p orogen --bench water`. Built and run by richdem.sh.
//
// Usage: richdem_fill RAW N RUNS ALGORITHM [OUT]
//   RAW: n × n f32 little-endian heights, row-major; ALGORITHM: barnes2014 (Barnes, Lehman &
//   Mulla 2014, Priority-Flood with a pit queue, D8) or zhou2016 (Zhou, Sun & Fu 2016);
//   OUT: where to write the filled heights of the last run (same layout).
// Prints one line per run: "richdem <algorithm> run <i>: <seconds> s".
#include <richdem/depressions/Barnes2014.hpp>
#include <richdem/depressions/Zhou2016.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: richdem_fill RAW N RUNS barnes2014|zhou2016 [OUT]\n");
    return 2;
  }
  const int n = std::stoi(argv[2]);
  const int runs = std::stoi(argv[3]);
  const std::string algorithm = argv[4];
  if (algorithm != "barnes2014" && algorithm != "zhou2016") {
    std::fprintf(stderr, "unknown algorithm %s\n", algorithm.c_str());
    return 2;
  }
  std::vector<float> z(static_cast<size_t>(n) * n);
  std::ifstream in(argv[1], std::ios::binary);
  if (!in.read(reinterpret_cast<char *>(z.data()), z.size() * sizeof(float))) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  richdem::Array2D<float> dem(n, n);
  for (int r = 0; r < runs; r++) {
    for (int y = 0; y < n; y++)
      for (int x = 0; x < n; x++) dem(x, y) = z[static_cast<size_t>(y) * n + x];
    const auto t = std::chrono::steady_clock::now();
    if (algorithm == "barnes2014")
      richdem::PriorityFlood_Barnes2014<richdem::Topology::D8>(dem);
    else
      richdem::PriorityFlood_Zhou2016(dem);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    std::printf("richdem %s run %d: %.3f s\n", algorithm.c_str(), r + 1, s);
    std::fflush(stdout);
  }
  if (argc > 5) {
    std::ofstream out(argv[5], std::ios::binary);
    for (int y = 0; y < n; y++)
      for (int x = 0; x < n; x++) {
        const float v = dem(x, y);
        out.write(reinterpret_cast<const char *>(&v), sizeof v);
      }
  }
  return 0;
}
