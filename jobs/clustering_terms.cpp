#include "jobs/clustering_terms.hpp"

#include <cstring>

namespace reflectd::jobs {
namespace {

double term_vector_norm(const TermVector& v) {
  double sum = 0;
  for (const auto& [t, w] : v) sum += w * w;
  return std::sqrt(sum);
}

double term_vector_dot(const TermVector& a, const TermVector& b) {
  double sum = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const int c = a[i].first.compare(b[j].first);
    if (c == 0) {
      sum += a[i].second * b[j].second;
      ++i;
      ++j;
    } else if (c < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return sum;
}

}  // namespace

double cosine(const TermVector& a, const TermVector& b) {
  const double na = term_vector_norm(a);
  const double nb = term_vector_norm(b);
  if (na == 0 || nb == 0) return 0;
  return term_vector_dot(a, b) / (na * nb);
}

}  // namespace reflectd::jobs

namespace reflectd::jobs::clustering {

double norm(const IdVector& v) {
  double sum = 0;
  for (const auto& [t, w] : v) sum += w * w;
  return std::sqrt(sum);
}

void TermSpace::sort_by_text(IdVector& v) const {
  std::sort(v.begin(), v.end(),
            [this](const auto& a, const auto& b) { return text_less(a.first, b.first); });
}

IdVector TermSpace::heaviest(IdVector v, std::size_t n) const {
  if (v.size() > n) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), heavier());
    v.resize(n);
  }
  sort_by_text(v);
  return v;
}

std::vector<TermId> TermSpace::heaviest_terms(const IdVector& v, std::size_t n) const {
  IdVector top = v;
  const std::size_t k = std::min(n, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(k), top.end(),
                    heavier());
  std::vector<TermId> out;
  out.reserve(k);
  for (std::size_t i = 0; i < k; ++i) out.push_back(top[i].first);
  return out;
}

double TermSpace::cosine(const IdVector& a, const IdVector& b) {
  const double na = norm(a);
  const double nb = norm(b);
  if (na == 0 || nb == 0) return 0;
  load(a);
  const double d = dot_loaded(b);
  unload(a);
  return d / (na * nb);
}

IdVector TermSpace::sum(const IdVector& a, const IdVector& b) const {
  IdVector out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (j >= b.size() || (i < a.size() && text_less(a[i].first, b[j].first))) {
      out.push_back(a[i++]);
    } else if (i >= a.size() || text_less(b[j].first, a[i].first)) {
      out.push_back(b[j++]);
    } else {
      out.emplace_back(a[i].first, a[i].second + b[j].second);
      ++i;
      ++j;
    }
  }
  return out;
}

std::string TermSpace::encode(const IdVector& v) const {
  std::string out;
  for (const auto& [id, weight] : v) {
    const std::string& term = text(id);
    const auto len = static_cast<std::uint16_t>(std::min<std::size_t>(term.size(), 65535));
    out.append(reinterpret_cast<const char*>(&len), sizeof len);
    out.append(term.data(), len);
    out.append(reinterpret_cast<const char*>(&weight), sizeof weight);
  }
  return out;
}

IdVector TermSpace::decode(const void* data, int size) {
  IdVector v;
  const auto* p = static_cast<const char*>(data);
  const auto* end = p + size;
  while (p + sizeof(std::uint16_t) <= end) {
    std::uint16_t len = 0;
    std::memcpy(&len, p, sizeof len);
    p += sizeof len;
    if (p + len + sizeof(double) > end) break;
    const TermId id = intern(std::string_view(p, len));
    p += len;
    double weight = 0;
    std::memcpy(&weight, p, sizeof weight);
    p += sizeof weight;
    v.emplace_back(id, weight);
  }
  return v;
}

void TermSpace::reset_namespace_caches() {
  for (Slot& s : slots_) {
    s.has_term = false;
    s.term = Term{};
    s.has_window = false;
    s.window.clear();
  }
}

void TermSpace::clear() {
  slots_.clear();
  loaded_.clear();
  ids_.clear();
}

}  // namespace reflectd::jobs::clustering
