export {
  type CatalogAuth,
  CredentialUnavailableError,
  type UpstreamAuth,
  VENDOR_TOKEN_HOSTS,
  VendorCredentials,
  type VendorCredentialsOptions,
} from "./credentials";
export { AZURE_COGNITIVE_SERVICES_SCOPE } from "./entra";
export { GOOGLE_CLOUD_PLATFORM_SCOPE } from "./google";
export {
  ACCEPTED_KINDS,
  acceptedKinds,
  CREDENTIAL_KINDS,
  type CredentialKind,
  describeKey,
  type EntraClientSecret,
  type KeyDescription,
  parseEntraClientSecret,
  parseServiceAccountKey,
  type ServiceAccountKey,
} from "./keys";
