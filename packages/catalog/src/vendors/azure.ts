import type { CatalogEntry } from "../types";
import { API_KEY_TOKEN } from "./model";
import { OPENAI_MODELS } from "./openai";

/** Models deployable on Azure OpenAI whose Global Standard price equals OpenAI's list price. */
const AZURE_MODEL_IDS = new Set([
  "gpt-5",
  "gpt-5-mini",
  "gpt-5-nano",
  "gpt-4.1",
  "gpt-4.1-mini",
  "gpt-4.1-nano",
  "o3",
  "o4-mini",
  "gpt-4o",
  "gpt-4o-mini",
]);

/**
 * Azure OpenAI, priced at Global Standard deployment rates (azure.microsoft.com "Azure OpenAI
 * Service pricing"), which match OpenAI's list prices; Data Zone and Regional deployments cost
 * more and need per-provider rates. Traffic is addressed to deployments, whose names the
 * operator chooses: the listing's `model` field of each deployment names the catalog model.
 */
export const azure: CatalogEntry = {
  prices_checked_on: "2026-11-22",
  prices_source: "https://azure.microsoft.com/en-us/pricing/details/cognitive-services/openai-service/",
  id: "azure_api",
  name: "Azure OpenAI",
  description: "OpenAI models deployed in an Azure OpenAI (Azure AI Foundry) resource.",
  default_host: "{resource}.openai.azure.com",
  auth_header_name: "api-key",
  auth_header_template: API_KEY_TOKEN,
  default_content_type: "application/json",
  brand_color: "#0078d4",
  kind: "llm",
  api_flavor: "azure_openai",
  extra_headers: [],
  identity_injection: {
    json_metadata: { customizable: false, header: "", user_key: "user", groups_key: "" },
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cached_input"],
  models: OPENAI_MODELS.filter((m) => AZURE_MODEL_IDS.has(m.id)),
  // Deployments, not base models: a deployment name is what callers send as `model`.
  listing: { path: "/openai/deployments?api-version=2022-12-01", shape: "azure_data" },
};
