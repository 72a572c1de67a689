#include "jobs/clustering_assign.hpp"

#include <algorithm>
#include <utility>

#include "jobs/clustering_text.hpp"

namespace reflectd::jobs::clustering {

Assigner::Assigner(const ClusterParams& params, TermSpace& terms, TermIndex& index,
                   ClusterStore& clusters)
    : p_(params), terms_(terms), index_(index), clusters_(clusters) {}

std::string Assigner::label_of(const std::string& ns, const IdVector& centroid) {
  std::string label;
  for (const TermId t : terms_.heaviest_terms(centroid, kLabelTerms)) {
    if (!label.empty()) label += ", ";
    label += index_.term(ns, t).surface;
  }
  return label;
}

Cluster* Assigner::best_candidate(const std::string& ns, const IdVector& v, double& best_cos) {
  candidates_.clear();
  for (const TermId t : terms_.heaviest_terms(v, static_cast<std::size_t>(p_.query_terms))) {
    for (const auto& [touched, id] : index_.window(ns, t)) candidates_.push_back(id);
  }
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  // The candidates' centroids are spread over the heap: look them all up first, then score
  // them while the next one's first cache lines are being fetched.
  candidate_clusters_.clear();
  for (const std::int64_t id : candidates_) candidate_clusters_.push_back(&clusters_.get(id));
  Cluster* best = nullptr;
  best_cos = -1;
  terms_.load(v);
  for (std::size_t i = 0; i < candidate_clusters_.size(); ++i) {
    if (i + 1 < candidate_clusters_.size()) {
      const auto* next = candidate_clusters_[i + 1]->centroid.data();
      __builtin_prefetch(next);
      __builtin_prefetch(reinterpret_cast<const char*>(next) + 64);
    }
    Cluster& c = *candidate_clusters_[i];
    const double cos = c.centroid_norm > 0 ? terms_.dot_loaded(c.centroid) / c.centroid_norm : 0.0;
    if (cos > best_cos || (cos == best_cos && best != nullptr && c.first_seq < best->first_seq)) {
      best = &c;
      best_cos = cos;
    }
  }
  terms_.unload(v);
  return best;
}

bool Assigner::join(const std::string& ns, const AssignedEvent& e, const IdVector& v,
                    Cluster& target) {
  if (!created_ids_.contains(target.id)) counts_.reinforced.insert(target.id);
  bool duplicate = false;
  if (terms_.cosine(v, target.medoid) >= p_.duplicate_threshold) {
    duplicate = true;
    ++target.duplicates;
    ++counts_.duplicates_merged;
  } else {
    target.centroid = terms_.heaviest(terms_.sum(target.centroid, v),
                                      static_cast<std::size_t>(p_.centroid_terms));
    target.centroid_norm = norm(target.centroid);
    ++target.members;
    // The medoid is the member closest to the centroid, re-examined whenever a member joins.
    if (terms_.cosine(v, target.centroid) > terms_.cosine(target.medoid, target.centroid)) {
      target.medoid = v;
      target.medoid_seq = e.seq;
      target.summary = summary_of(e.content);
      ++counts_.summaries_generated;
    }
    target.label = label_of(ns, target.centroid);
  }
  target.last_seq = e.seq;
  target.first_us = std::min(target.first_us, e.ts);
  target.last_us = std::max(target.last_us, e.ts);
  clusters_.mark_dirty(target);
  return duplicate;
}

Cluster& Assigner::seed(const std::string& ns, const AssignedEvent& e, const IdVector& v) {
  Cluster c;
  c.id = e.seq;
  c.first_seq = c.last_seq = c.medoid_seq = e.seq;
  c.first_us = c.last_us = e.ts;
  c.members = 1;
  c.centroid = v;
  c.centroid_norm = norm(v);
  c.medoid = v;
  c.label = label_of(ns, v);
  c.summary = summary_of(e.content);
  c.sensitivity = e.sensitivity;
  Cluster& seeded = clusters_.seed(ns, std::move(c));
  created_ids_.insert(seeded.id);
  ++counts_.clusters_created;
  ++counts_.summaries_generated;
  return seeded;
}

void Assigner::assign(const std::string& ns, const AssignedEvent& e, const IdVector& v) {
  double best_cos = -1;
  Cluster* const best = best_candidate(ns, v, best_cos);
  bool duplicate = false;
  double similarity = 1.0;
  Cluster* target = nullptr;
  if (best != nullptr && best_cos >= p_.similarity_threshold) {
    target = best;
    similarity = best_cos;
    duplicate = join(ns, e, v, *target);
  } else {
    target = &seed(ns, e, v);
  }
  ++counts_.facts_assigned;
  for (const TermId t :
       terms_.heaviest_terms(target->centroid, static_cast<std::size_t>(p_.index_terms))) {
    index_.touch(ns, t, target->id, e.seq);
  }
  if (e.sensitivity > target->sensitivity) {
    target->sensitivity = e.sensitivity;
    clusters_.mark_dirty(*target);
  }
  clusters_.add_member(e.seq, target->id, duplicate, similarity);
  clusters_.add_entities(target->id, *e.entity_ids);
}

}  // namespace reflectd::jobs::clustering
