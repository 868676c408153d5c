export {
  AwsSigningError,
  awsRequestSigner,
  BEDROCK_SIGNING_SERVICE,
  type RequestSigner,
  regionOfBedrockHost,
  type SignableRequest,
  signingRegion,
} from "./aws";
export {
  type CatalogAuth,
  CredentialUnavailableError,
  type ExchangedKind,
  type UpstreamAuth,
  VENDOR_TOKEN_HOSTS,
  VendorCredentials,
  type VendorCredentialsOptions,
} from "./credentials";
export { AZURE_COGNITIVE_SERVICES_SCOPE } from "./entra";
export { GOOGLE_CLOUD_PLATFORM_SCOPE } from "./google";
export {
  ACCEPTED_KINDS,
  AWS_REGION,
  type AwsAccessKey,
  acceptedKinds,
  CREDENTIAL_KINDS,
  type CredentialKind,
  describeKey,
  type EntraClientSecret,
  type KeyDescription,
  parseAwsAccessKey,
  parseEntraClientSecret,
  parseServiceAccountKey,
  type ServiceAccountKey,
} from "./keys";
export type { ClientCredentialsGrant, TokenFetch } from "./oauth";
